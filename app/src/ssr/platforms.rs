//! The crowd platforms as the server reaches them: the accounts the operator gave `serve`
//! (from the environment or a file, never the database), a client of each, and each account's
//! last check (one cheap call, asked again at most once a minute, and never for long).

use domain::wire::platform::AccountView;
use platforms::accounts::Accounts;
use platforms::Site;
use std::time::{Duration, Instant};

/// How long an account's check is kept, and how long one may take.
const CHECK_KEPT: Duration = Duration::from_secs(60);
const CHECK_TIME: Duration = Duration::from_secs(10);

#[derive(Debug, Default)]
pub struct Platforms {
    pub accounts: Accounts,
    pub sites: Vec<Site>,
    checked: tokio::sync::Mutex<Option<(Instant, Vec<AccountView>)>>,
}

impl Platforms {
    pub fn new(accounts: Accounts) -> Self {
        Platforms {
            sites: Site::all(&accounts),
            accounts,
            checked: Default::default(),
        }
    }

    /// The client of `platform` on its site (MTurk: live or sandbox).
    pub fn site(&self, platform: domain::platform::Platform, sandbox: bool) -> Option<&Site> {
        self.sites
            .iter()
            .find(|s| s.platform() == platform && s.sandbox() == sandbox)
    }

    /// Every account and whether it works.
    pub async fn status(&self) -> Vec<AccountView> {
        let mut kept = self.checked.lock().await;
        if let Some((at, views)) = kept.as_ref() {
            if at.elapsed() < CHECK_KEPT {
                return views.clone();
            }
        }
        let mut views = Vec::new();
        for site in &self.sites {
            let (works, said) = match tokio::time::timeout(CHECK_TIME, site.check()).await {
                Ok(Ok(said)) => (true, said),
                Ok(Err(f)) => (false, f.to_string()),
                Err(_) => (
                    false,
                    format!("no answer within {} s", CHECK_TIME.as_secs()),
                ),
            };
            views.push(AccountView {
                platform: site.platform(),
                sandbox: site.sandbox(),
                works,
                said,
            });
        }
        *kept = Some((Instant::now(), views.clone()));
        views
    }
}
