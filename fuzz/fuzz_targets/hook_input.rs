//! Any bytes on an agent hook's stdin: a parsed input (from a JSON object only) or an
//! error the hook turns into its answer; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match git_orchestrate::agent::hook::parse_input(bytes) {
        Ok(_) => {
            assert!(serde_json::from_slice::<serde_json::Value>(bytes).is_ok_and(|v| v.is_object()))
        }
        Err(e) => assert!(!e.is_empty()),
    }
});
