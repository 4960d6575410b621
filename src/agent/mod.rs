//! Agent integration (SPEC §11): the tool schemas, the shell-command guard, the hook adapters
//! of each agent client, and the client project files `init --agent` merges into. Each is a
//! thin translation of what the engine already does; nothing here prints.

pub mod guard;
pub mod hook;
pub mod run;
pub mod setup;
pub mod shell;
pub mod tools;
