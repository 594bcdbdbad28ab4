//! Who uses the platform: the three roles and what each may see.
//! Role checks on the server all go through `Role::is_staff` and friends.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Configures studies and users.
    Admin,
    /// Reads data, scores and exports.
    Researcher,
    /// A crowd worker: sees only the items of their own assignment.
    Worker,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Admin, Role::Researcher, Role::Worker];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Researcher => "researcher",
            Role::Worker => "worker",
        }
    }
    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_parse_and_staff() {
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
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
