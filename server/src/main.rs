//! The `clues-lab` binary: see `clues-lab --help`.
fn main() -> std::process::ExitCode {
    server::cli::main()
}
