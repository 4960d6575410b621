//! Where a workflow is, by name: [`Status`], spelled as in `state.json` (docs/states.md).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Declares [`Status`] and its name table from one list, so `Status::ALL` cannot miss one.
macro_rules! statuses {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// Where the workflow is. Names are spelled as in `state.json` (docs/states.md).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum Status {
            $(#[serde(rename = $name)] $variant,)*
        }

        impl Status {
            pub const ALL: &'static [Status] = &[$(Status::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Status::$variant => $name,)*
                }
            }
        }
    };
}

statuses! {
    Initializing => "INITIALIZING",
    CreatingBranch => "CREATING_BRANCH",
    ExecutingTdd => "EXECUTING_TDD",
    Debugging => "DEBUGGING",
    Replanning => "REPLANNING",
    CodeReview => "CODE_REVIEW",
    AwaitingFinalization => "AWAITING_FINALIZATION",
    FinalizeComplete => "FINALIZE_COMPLETE",
    PlanUpdated => "PLAN_UPDATED",
    MergingBranch => "MERGING_BRANCH",
    Halted => "HALTED",
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
