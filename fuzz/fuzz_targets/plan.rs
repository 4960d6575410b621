//! Any bytes as a submitted plan: a plan that reads back as itself, or every problem at a
//! path; never a panic.
#![no_main]

use git_orchestrate::workflow::plan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match plan::parse_plan(bytes) {
        Ok(parsed) => {
            let again = plan::parse_plan(&serde_json::to_vec(&parsed).expect("a plan serializes"));
            assert_eq!(again.ok(), Some(parsed));
        }
        Err(problems) => {
            assert!(!problems.is_empty());
            assert!(
                problems
                    .iter()
                    .all(|p| !p.path.is_empty() && !p.message.is_empty())
            );
        }
    }
    let _ = plan::duplicate_keys(bytes);
});
