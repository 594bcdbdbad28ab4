//! What the browser learns about the signed-in user.

use crate::people::Role;
use serde::{Deserialize, Serialize};

/// What the browser knows about the signed-in user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    pub name: String,
    pub role: Role,
}
