//! Any text as a free-text field, a PR title and a commit message: the field rule holds,
//! a branch name is a valid git branch name; never a panic.
#![no_main]

use git_orchestrate::workflow::branch_name;
use git_orchestrate::workflow::fields::{self, Field};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    for field in [Field::Summary, Field::TestCommand, Field::Report] {
        if fields::check(field, text).is_ok() {
            assert!(!text.trim().is_empty() && text.len() <= field.cap());
            assert!(!text.contains('\0'));
        }
    }
    if let Some(name) = branch_name::sanitize(text) {
        assert!(
            git_orchestrate::store::is_valid_branch_name(&name),
            "{name}"
        );
    }
    let _ = git_orchestrate::store::is_checkpoint_message(text);
    let _ = git_orchestrate::workflow::notes::checkpoint_records(text);
});
