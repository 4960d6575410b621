//! git-orchestrate's guard, in a crate of its own so that cargo, not a scanner, keeps it apart
//! from the engine: the pre-tool-use [`guard`] that judges an agent's shell commands and file
//! writes, the POSIX [`shell`] reader it reads them with, git's [`glob`] matching of paths,
//! and the few facts of the product it guards ([`product`]). It runs nothing and reads only
//! the files a command names (docs/agent-guide.md, "The guard and its limits").

#![forbid(unsafe_code)]

pub mod glob;
pub mod guard;
pub mod product;
pub mod shell;
#[cfg(test)]
mod test_git;
