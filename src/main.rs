fn main() -> std::process::ExitCode {
    leakcheck::run()
}
