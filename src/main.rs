//! The `git-orchestrate` binary (run as `git orchestrate`): everything lives in the library.

fn main() -> std::process::ExitCode {
    git_orchestrate::cli::main()
}
