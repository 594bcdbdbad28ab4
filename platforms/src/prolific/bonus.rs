//! A Prolific bonus in its two calls: the bulk bonus made and kept in the ledger, then paid.
//! Prolific pays a bulk bonus again on every `pay/` call and takes no idempotency key, so
//! where a pay stands between the calls is kept (`BonusStep`) and a pay is sent again only
//! where it surely did nothing.

use super::wire::*;
use super::{enc, Client, Method};
use crate::run::{Answer, CallError, Ctx};
use crate::Fault;
use serde_json::{json, Value};
use store::platform::calls::{self, Effect};

/// How long a bonus pay whose answer was lost is looked for before the researcher is asked to
/// check it, and how long one answered with a 5xx is looked for before it is paid again
/// (Prolific pays a bulk bonus "in the following minutes").
const PAY_CONFIRM_MS: i64 = 30 * 60 * 1000;
const PAY_FAILED_MS: i64 = 10 * 60 * 1000;

impl Client {
    /// A bonus in two steps: the bulk bonus made and kept, then paid. Prolific pays a bulk
    /// bonus again on every `pay/` call, so a pay is sent again only where it surely did
    /// nothing: refused with a 429 or never sent; after a 5xx, once the bonus has not appeared
    /// on the submission for `PAY_FAILED_MS`; a pay whose answer was lost is looked for on the
    /// submission and left to the researcher after `PAY_CONFIRM_MS`, never sent again by
    /// itself.
    pub(super) async fn bonus(
        &self,
        ctx: &Ctx<'_>,
        remote_id: &str,
        cents: i64,
    ) -> Result<Answer, CallError> {
        let bulk = match BonusStep::read(ctx.held.remote_ref.as_deref()) {
            BonusStep::Unmade => {
                let amount = format!("{}.{:02}", cents / 100, cents % 100);
                let body = BonusRequest {
                    study_id: ctx.remote_id()?.to_string(),
                    csv_bonuses: format!("{remote_id},{amount}\n"),
                };
                let b: BulkBonus = self
                    .post("/api/v1/submissions/bonus-payments/", body)
                    .await?;
                calls::set_ref(ctx.pool, ctx.held, &BonusStep::Made(b.id.clone()).write()).await?;
                b.id
            }
            BonusStep::Made(bulk) => bulk,
            // Sent again by the researcher's Retry, who found it unpaid on Prolific (a call
            // this platform sends again by itself is marked sent first).
            BonusStep::Paying(bulk, _) | BonusStep::Failed(bulk, _) if !ctx.sent_before() => bulk,
            BonusStep::Paying(bulk, at) | BonusStep::Failed(bulk, at) => {
                let failed = matches!(
                    BonusStep::read(ctx.held.remote_ref.as_deref()),
                    BonusStep::Failed(..)
                );
                let s = self.submission(remote_id).await?;
                if s.bonus_payments.iter().any(|b| (b.round() as i64) == cents) {
                    let said = json!({ "bulk": bulk, "confirmed": "on the submission" });
                    return Ok(Answer::new(said, Effect::Nothing));
                }
                let waited = ctx.now() - at;
                match (failed, waited > PAY_FAILED_MS, waited > PAY_CONFIRM_MS) {
                    // Prolific answered that the pay failed, and nothing came of it since.
                    (true, true, _) => bulk,
                    (false, _, true) => {
                        return Err(Fault::Refused(format!(
                            "the pay of bulk bonus {bulk} was sent but Prolific's answer was lost, and the bonus has not appeared on submission {remote_id} in {} minutes: check it on Prolific, and press Retry only if it was not paid",
                            PAY_CONFIRM_MS / 60_000
                        ))
                        .into())
                    }
                    _ => {
                        return Err(Fault::Unknown(format!(
                            "the pay of bulk bonus {bulk} may have gone through; looking for it on the submission"
                        ))
                        .into())
                    }
                }
            }
        };
        let paying = BonusStep::Paying(bulk.clone(), ctx.now());
        calls::set_ref(ctx.pool, ctx.held, &paying.write()).await?;
        let path = format!("/api/v1/bulk-bonus-payments/{}/pay/", enc(&bulk));
        let after = match self.call::<Value>(Method::Post, &path, None).await {
            Ok(_) => {
                return Ok(Answer::new(
                    json!({ "bulk": bulk, "paid_cents": cents }),
                    Effect::Nothing,
                ))
            }
            // Surely not paid: paid again at the next try.
            Err(f @ (Fault::Busy(_) | Fault::Unsent(_) | Fault::Refused(_))) => {
                (BonusStep::Made(bulk), f)
            }
            Err(f @ Fault::Failed(_)) => (BonusStep::Failed(bulk, ctx.now()), f),
            // The answer was lost: the pay stays marked as sent.
            Err(f @ (Fault::Unknown(_) | Fault::AlreadyDone(_))) => return Err(f.into()),
        };
        calls::set_ref(ctx.pool, ctx.held, &after.0.write()).await?;
        Err(after.1.into())
    }
}

/// Where a Prolific bonus stands between its two calls, as the ledger keeps it (`remote_ref`).
#[derive(Debug, PartialEq, Eq)]
enum BonusStep {
    /// No bulk bonus made yet (or one whose answer was lost: another is made; an unpaid bulk
    /// bonus costs nothing).
    Unmade,
    /// Made, not paid.
    Made(String),
    /// Its pay was sent at this time (unix ms); the answer may have been lost.
    Paying(String, i64),
    /// Its pay was answered with a 5xx at this time.
    Failed(String, i64),
}

impl BonusStep {
    fn read(kept: Option<&str>) -> BonusStep {
        let Some(kept) = kept else {
            return BonusStep::Unmade;
        };
        let at = |t: &str| t.parse().unwrap_or(0);
        match kept.split_once(':') {
            Some((bulk, rest)) => match rest.split_once('@') {
                Some(("failed", t)) => BonusStep::Failed(bulk.into(), at(t)),
                // A pay marked by an earlier version or cut short reads as sent.
                Some((_, t)) => BonusStep::Paying(bulk.into(), at(t)),
                None => BonusStep::Paying(bulk.into(), 0),
            },
            None => BonusStep::Made(kept.into()),
        }
    }

    fn write(&self) -> String {
        match self {
            BonusStep::Unmade => String::new(),
            BonusStep::Made(b) => b.clone(),
            BonusStep::Paying(b, t) => format!("{b}:paying@{t}"),
            BonusStep::Failed(b, t) => format!("{b}:failed@{t}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::BonusStep;

    #[test]
    fn a_bonus_step_reads_back_as_it_was_kept() {
        for step in [
            BonusStep::Made("b1".into()),
            BonusStep::Paying("b1".into(), 17),
            BonusStep::Failed("b1".into(), 18),
        ] {
            assert_eq!(BonusStep::read(Some(&step.write())), step);
        }
        assert_eq!(BonusStep::read(None), BonusStep::Unmade);
        assert_eq!(
            BonusStep::read(Some("b1:paying")),
            BonusStep::Paying("b1".into(), 0)
        );
    }
}
