//! The operator's accounts on the platforms: a Prolific API token, MTurk access keys (live or
//! sandbox), read from the environment or from a file named at `serve`, never from or into the
//! database. A secret never leaves this module but in the one header of a call: it prints as
//! `***`, serialises to nothing, and no page, log, export or bundle sees it.

use domain::platform::fees::FeeRates;
use domain::platform::Platform;
use std::collections::HashMap;
use std::path::Path;

/// A credential: printed and debugged as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The value, for the one header or signature that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// Prolific's live API.
pub const PROLIFIC_API: &str = "https://api.prolific.com";
/// MTurk's requester endpoints.
pub const MTURK_LIVE: &str = "https://mturk-requester.us-east-1.amazonaws.com";
pub const MTURK_SANDBOX: &str = "https://mturk-requester-sandbox.us-east-1.amazonaws.com";

/// A Prolific account.
#[derive(Clone, Debug)]
pub struct ProlificAccount {
    pub token: Secret,
    /// The API's base URL (`PROLIFIC_API_URL`: a stand-in's on loopback in tests).
    pub api: String,
    /// The workspace its participant groups are made in (`PROLIFIC_WORKSPACE`; else the
    /// account's first).
    pub workspace: Option<String>,
    /// The project its studies are made in (`PROLIFIC_PROJECT`; else the account's first).
    pub project: Option<String>,
    /// Where Prolific signs its hooks with (`PROLIFIC_HOOK_SECRET`: the workspace's hook
    /// secret); without it, hooks are refused and the study is kept in step by polling.
    pub hook_secret: Option<Secret>,
}

/// An MTurk account.
#[derive(Clone, Debug)]
pub struct MturkAccount {
    pub access_key: Secret,
    pub secret_key: Secret,
    /// The sandbox (no money moves) rather than the live site.
    pub sandbox: bool,
    /// The endpoint (`MTURK_ENDPOINT_URL`: a stand-in's on loopback in tests); else the live or
    /// sandbox requester endpoint.
    pub endpoint: String,
}

/// Every account the operator gave, and the fees they state.
#[derive(Clone, Debug, Default)]
pub struct Accounts {
    pub prolific: Option<ProlificAccount>,
    pub mturk: Option<MturkAccount>,
    pub fees: FeeRates,
}

/// The settings' names, in the environment and in a credentials file alike.
pub const NAMES: [&str; 11] = [
    "PROLIFIC_TOKEN",
    "PROLIFIC_API_URL",
    "PROLIFIC_WORKSPACE",
    "PROLIFIC_PROJECT",
    "PROLIFIC_HOOK_SECRET",
    "PROLIFIC_FEE_PERCENT",
    "PROLIFIC_VAT_PERCENT",
    "MTURK_ACCESS_KEY_ID",
    "MTURK_SECRET_ACCESS_KEY",
    "MTURK_SANDBOX",
    "MTURK_ENDPOINT_URL",
];

impl Accounts {
    /// The accounts in `file` (lines `NAME=value`; `#` comments), each setting the
    /// environment does not give; the environment first.
    pub fn load(file: Option<&Path>) -> Result<Accounts, String> {
        let mut given: HashMap<String, String> = HashMap::new();
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the credentials file {}: {e}", path.display()))?;
            warn_if_readable_by_others(path);
            given = parse_file(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for name in NAMES {
            if let Ok(v) = std::env::var(name) {
                given.insert(name.to_string(), v);
            }
        }
        Accounts::from_settings(&given)
    }

    /// The accounts in `settings` (the names of [`NAMES`]).
    pub fn from_settings(settings: &HashMap<String, String>) -> Result<Accounts, String> {
        let get = |name: &str| {
            settings
                .get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let prolific = get("PROLIFIC_TOKEN").map(|token| ProlificAccount {
            token: Secret::new(token),
            api: get("PROLIFIC_API_URL").unwrap_or_else(|| PROLIFIC_API.into()),
            workspace: get("PROLIFIC_WORKSPACE"),
            project: get("PROLIFIC_PROJECT"),
            hook_secret: get("PROLIFIC_HOOK_SECRET").map(Secret::new),
        });
        let sandbox = match get("MTURK_SANDBOX").as_deref() {
            None | Some("0" | "false" | "no") => false,
            Some("1" | "true" | "yes") => true,
            Some(v) => {
                return Err(format!(
                    "MTURK_SANDBOX is {v:?}: say 1 (the sandbox) or 0 (live)"
                ))
            }
        };
        let mturk = match (get("MTURK_ACCESS_KEY_ID"), get("MTURK_SECRET_ACCESS_KEY")) {
            (Some(a), Some(s)) => Some(MturkAccount {
                access_key: Secret::new(a),
                secret_key: Secret::new(s),
                sandbox,
                endpoint: get("MTURK_ENDPOINT_URL")
                    .unwrap_or_else(|| if sandbox { MTURK_SANDBOX } else { MTURK_LIVE }.into()),
            }),
            (None, None) => None,
            _ => {
                return Err(
                    "MTurk needs both MTURK_ACCESS_KEY_ID and MTURK_SECRET_ACCESS_KEY".into(),
                )
            }
        };
        let bp = |name: &str, default: u32| -> Result<u32, String> {
            match get(name) {
                None => Ok(default),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=100.0).contains(p))
                    .map(|p| (p * 100.0).round() as u32)
                    .ok_or_else(|| format!("{name} is {v:?}: a percentage from 0 to 100")),
            }
        };
        let d = FeeRates::default();
        Ok(Accounts {
            prolific,
            mturk,
            fees: FeeRates {
                prolific_fee_bp: bp("PROLIFIC_FEE_PERCENT", d.prolific_fee_bp)?,
                prolific_vat_bp: bp("PROLIFIC_VAT_PERCENT", d.prolific_vat_bp)?,
            },
        })
    }

    /// The platforms and sites (sandbox or live) this process can call.
    pub fn sites(&self) -> Vec<(Platform, bool)> {
        let mut out = Vec::new();
        if self.prolific.is_some() {
            out.push((Platform::Prolific, false));
        }
        if let Some(m) = &self.mturk {
            out.push((Platform::Mturk, m.sandbox));
        }
        out
    }

    /// Whether an account of `platform` on its site is configured.
    pub fn has(&self, platform: Platform, sandbox: bool) -> bool {
        self.sites().contains(&(platform, sandbox))
    }
}

/// `NAME=value` lines; blank lines and `#` comments are skipped; values may be quoted.
fn parse_file(text: &str) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((name, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected NAME=value", n + 1));
        };
        let name = name.trim();
        if !NAMES.contains(&name) {
            return Err(format!(
                "line {}: {name} is not a setting (they are {})",
                n + 1,
                NAMES.join(", ")
            ));
        }
        let value = value.trim().trim_matches('"').trim_matches('\'');
        out.insert(name.to_string(), value.to_string());
    }
    Ok(out)
}

/// A credentials file others may read is said once at start.
fn warn_if_readable_by_others(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(m) = std::fs::metadata(path) {
        if m.permissions().mode() & 0o077 != 0 {
            tracing::warn!(
                "the credentials file {} may be read by others than its owner: chmod 600 it",
                path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn accounts_come_from_settings_and_secrets_never_print() {
        let a = Accounts::from_settings(&settings(&[
            ("PROLIFIC_TOKEN", "tok-123"),
            ("MTURK_ACCESS_KEY_ID", "AKID"),
            ("MTURK_SECRET_ACCESS_KEY", "s3cr3t"),
            ("MTURK_SANDBOX", "1"),
            ("PROLIFIC_FEE_PERCENT", "42.8"),
        ]))
        .unwrap();
        assert_eq!(
            a.sites(),
            [(Platform::Prolific, false), (Platform::Mturk, true)]
        );
        assert_eq!(a.mturk.as_ref().unwrap().endpoint, MTURK_SANDBOX);
        assert_eq!(a.fees.prolific_fee_bp, 4280);
        let shown = format!("{a:?}");
        for secret in ["tok-123", "AKID", "s3cr3t"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(Accounts::from_settings(&settings(&[("MTURK_ACCESS_KEY_ID", "A")])).is_err());
        assert!(Accounts::from_settings(&settings(&[("MTURK_SANDBOX", "maybe")])).is_err());
        assert!(Accounts::from_settings(&HashMap::new())
            .unwrap()
            .sites()
            .is_empty());
    }

    #[test]
    fn a_credentials_file_is_read_line_by_line() {
        let got = parse_file("# lab account\nexport PROLIFIC_TOKEN=\"abc\"\n\nMTURK_SANDBOX=1\n")
            .unwrap();
        assert_eq!(got["PROLIFIC_TOKEN"], "abc");
        assert!(parse_file("PROLIFIC_TOKN=x")
            .unwrap_err()
            .contains("not a setting"));
        assert!(parse_file("just words").unwrap_err().contains("line 1"));
    }
}
