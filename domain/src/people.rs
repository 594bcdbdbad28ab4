//! Who uses the platform: the three roles and what each may see.
//! Role checks on the server all go through `Role::is_staff` and friends.

use super::named::named_enum;

named_enum! {
    pub enum Role {
        /// Configures studies and users.
        Admin = "admin",
        /// Reads data, scores and exports.
        Researcher = "researcher",
        /// A crowd worker: sees only the items of their own assignment.
        Worker = "worker",
    }
}

impl Role {
    /// Researchers and admins see task data, quality reports and scores.
    pub fn is_staff(self) -> bool {
        matches!(self, Role::Admin | Role::Researcher)
    }
}

/// Checks a new user name: 1-64 characters, no whitespace or control characters.
pub fn validate_user_name(name: &str) -> Result<(), String> {
    let n = name.chars().count();
    if n == 0 || n > 64 {
        return Err(format!(
            "a user name has 1 to 64 characters, {name:?} has {n}"
        ));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "a user name may not contain spaces or control characters: {name:?}"
        ));
    }
    Ok(())
}

/// Checks an id a crowd platform puts in a study link (a worker, study, session, HIT or
/// assignment id): 1 to 64 ASCII letters, digits, '-' or '_'. `what` names it in the error.
pub fn validate_crowd_id(what: &str, id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the {what} in the link is not valid: 1 to 64 letters, digits, '-' or '_'"
        ))
    }
}

/// Checks a submission's client id (the browser sends 32 hex digits): 1 to 100 ASCII letters,
/// digits, '-', '_', '.' or ':'.
pub fn validate_client_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 100
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if ok {
        Ok(())
    } else {
        Err(
            "a submission needs a client id of 1 to 100 letters, digits, '-', '_', '.' or ':'"
                .into(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crowd_and_client_ids() {
        assert!(validate_crowd_id("Prolific id", "5f0a1b2c3d4e5f6a7b8c9d0e").is_ok());
        assert!(validate_crowd_id("assignment id", "ASSIGNMENT_ID_NOT_AVAILABLE").is_ok());
        for bad in ["", "=HYPERLINK(\"http://x\")", "a b", "é", &"x".repeat(65)] {
            let e = validate_crowd_id("study id", bad).unwrap_err();
            assert!(e.contains("the study id in the link is not valid"), "{e}");
        }
        assert!(validate_client_id("0123456789abcdef0123456789abcdef").is_ok());
        assert!(validate_client_id("prolific:w1-3.2").is_ok());
        for bad in ["", "=1+1", "a\tb", &"x".repeat(101)] {
            assert!(validate_client_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn roles_parse_and_staff() {
        assert_eq!(Role::parse("root"), None);
        assert!(Role::Admin.is_staff() && Role::Researcher.is_staff() && !Role::Worker.is_staff());
    }

    #[test]
    fn user_names() {
        assert!(validate_user_name("ada").is_ok());
        assert!(validate_user_name("").is_err());
        assert!(validate_user_name("a b").is_err());
        assert!(validate_user_name(&"x".repeat(65)).is_err());
    }
}
