// The migrations are embedded by `sqlx::migrate!` (db): rebuild when one is added or changed.
fn main() {
    println!("cargo:rerun-if-changed=../migrations/sqlite");
    println!("cargo:rerun-if-changed=../migrations/postgres");
}
