//! The imperative shell around the pure workflow core: each command reads a snapshot, asks
//! `workflow` what to do, carries it out (git, test commands, gates), and stores the result
//! with a compare-and-swap. A lost race re-runs the whole command from a fresh read.

pub mod adequacy;
pub mod agent_hook;
pub mod agent_setup;
pub mod answers;
mod archive;
pub mod attest;
pub mod audit;
mod board;
mod board_timeline;
mod branches;
mod chain;
mod checkpoint;
pub mod claims;
mod doctor;
mod error;
mod escape;
mod evidence;
mod finalize;
pub(crate) mod get_task;
pub mod git_hook;
pub mod guard_context;
pub mod hermetic;
mod history;
mod human;
mod init;
pub mod main_line;
pub mod notes;
mod pr_record;
mod proof;
pub mod remote;
mod repin;
pub mod run;
mod scratch;
mod session;
mod status;
mod submit;
mod sync;
#[cfg(test)]
pub(crate) mod test_repo;
pub mod ticket;
pub use ticket::{WorkflowStatus, workflow_status};
mod unrecorded;
pub mod verify;
mod worktree;

pub use answers::{
    Answer, AnswerCheck, AnswerSignature, AnswerVerdict, Signing, answer_payload, judge_answers,
};
pub use archive::{ArchiveReport, RestoreReport, archive, restore};
pub use audit::{AuditReport, audit};
pub use board::{
    BoardReport, BoardRow, BoardWorktree, ClaimSeen, HumanGate, UnclaimedPr, WorkflowState, board,
    board_fingerprint, board_with,
};
pub use board_timeline::{TimelineReport, timeline};
pub use checkpoint::{CheckpointReport, WithoutCommit, checkpoint};
pub use doctor::{Check, DoctorReport, Level, doctor};
pub use error::{AuditProblem, EngineError, Unsafe};
pub(crate) use error::{check_field, field_refused, io_error, wrong_state};
pub use escape::{EscalateReport, ScopeReductionReport, escalate, request_scope_reduction};
pub use get_task::{GetTaskReport, brief_only, get_task};
pub use history::{LogReport, PlanReport, log, plan};
pub use human::{
    AnswerReport, ResumeReport, TreeApprovalAsked, TreeApprovalReport, approve, approve_tree,
    approve_tree_payload, reject, resume,
};
pub use init::{CHECK_NAME, CiProvider, CiReport, CiRequest, InitReport, RefspecAdded, init};
pub use repin::{RepinReport, repin};
pub use session::{Facts, Loaded, Session};
pub use status::{ConfigStatus, Progress, RemoteReport, StatusReport, status};
pub use submit::{SubmitKind, SubmitReport, TestReport, submit};
pub use sync::{
    Action, Adoption, BranchSync, NotesSync, Side, SyncReport, WorkflowSync, adopt_from_remote,
    ensure_refspecs, resolve_remote, sync,
};
pub use worktree::{
    Unpushed, WorktreeAddReport, WorktreeEntry, WorktreeListReport, WorktreeRemoveReport,
    add as worktree_add, list as worktree_list, remove as worktree_remove,
};
