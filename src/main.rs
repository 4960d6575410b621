fn main() -> std::process::ExitCode {
    git_orchestrate::cli::main()
}
