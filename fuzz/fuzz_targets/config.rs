//! Any text as `.orchestrate.toml`, and as a duration: a value or a message; never a panic.
#![no_main]

use git_orchestrate::config::{self, Config, Origin};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Err(e) = Config::parse(text, &Origin::WorkingTree) {
        assert!(!e.to_string().is_empty());
    }
    let _ = config::parse_duration(text);
});
