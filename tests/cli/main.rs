//! End-to-end tests: the real binary in real repositories. One test binary for all areas,
//! so they link once.

mod adequacy;
mod adequacy_cargo_mutants;
mod adequacy_files;
mod adequacy_ranges;
mod adequacy_stryker;
mod adequacy_witness;
mod adequacy_yarn_pnpm;
mod agent_hooks;
mod agent_setup;
mod agents;
mod approve;
mod archive;
mod attest;
mod bad_input;
mod board;
mod board_attest;
mod board_serve;
mod branching;
mod checkpoints;
mod ci;
mod claims;
mod confine;
mod crash;
mod debugging;
mod demo;
mod dsse;
mod entry;
mod errors;
mod escapes;
mod evidence;
mod evidence_cargo;
mod evidence_go_jest;
mod evidence_hooks;
mod evidence_hooks_config;
mod evidence_mocha;
mod evidence_vitest;
mod evidence_wrapper;
mod hooks;
mod idle;
mod input;
mod integrity;
mod json;
mod landing;
mod lifecycle;
mod mainpush;
mod managers;
mod mcp;
mod oracle;
mod package;
mod plain_layout;
mod race;
mod recorded_plans;
mod recovery;
mod reftable;
mod review;
mod run;
mod scale;
mod server_rules;
mod signed;
mod step_proofs;
mod support;
mod sync;
mod team;
mod tickets;
mod tickets_surfaces;
mod worktree;

/// Polls until process `pid` is gone (or a zombie awaiting its new parent), up to 5 s.
pub fn process_gone(pid: i32) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.split(") ").nth(1).is_some_and(|s| s.starts_with('Z')) => return true,
            Ok(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    false
}
