//! `user add`: an account with its role; the password from `CLUES_PASSWORD` or stdin.

use domain::people::Role;
use store::auth;
use store::db::cli as db;
use store::error::{Error, Result};

fn read_password() -> Result<String> {
    if let Ok(p) = std::env::var("CLUES_PASSWORD") {
        return Ok(p);
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| Error::io("cannot read the password from stdin", e))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

pub(super) async fn add_user(
    database: &str,
    name: &str,
    role: super::RoleArg,
    no_password: bool,
) -> Result<()> {
    let role = Role::from(role);
    let password = if no_password {
        None
    } else {
        Some(read_password()?)
    };
    let pool = db::connect(database).await?;
    auth::create_user(&pool, name, role, password).await?;
    println!("added {} {name}", role.as_str());
    Ok(())
}
