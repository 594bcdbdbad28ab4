//! What each kind of job needs of the machine a worker runs on (ONNX Runtime, the baseline's
//! encoder, a device for candle and one for ONNX Runtime), checked once before the first claim:
//! a worker takes only the kinds its machine can run, and says why it leaves the others.

use super::Work;
use crate::runtime::Device;

/// One thing a kind of job may need of the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// ONNX Runtime loads (its library is found and starts).
    OnnxRuntime,
    /// ONNX Runtime can run on the device asked for.
    OnnxDevice,
    /// candle can train on the device asked for (a `cuda` build and a GPU for `cuda`).
    CandleDevice,
    /// The frozen baseline's encoder is on this machine.
    Encoder,
}

impl Need {
    const ALL: [Need; 4] = [
        Need::OnnxRuntime,
        Need::OnnxDevice,
        Need::CandleDevice,
        Need::Encoder,
    ];
}

impl Work {
    /// What a job of this kind needs, in the order it would find out.
    pub fn needs(self) -> &'static [Need] {
        match self {
            Work::FrozenBaseline => &[Need::OnnxRuntime, Need::OnnxDevice, Need::Encoder],
            // Trained with candle, then evaluated with ONNX Runtime.
            Work::FineTuning => &[Need::CandleDevice, Need::OnnxRuntime, Need::OnnxDevice],
            Work::Onnx => &[Need::OnnxRuntime, Need::OnnxDevice],
            Work::Prompt | Work::Crossfit | Work::CrossfitUpstream => &[Need::CandleDevice],
            // The language model runs on its own server.
            Work::InContext => &[],
        }
    }
}

/// What the checks found on this machine: each need not met, with why; and, for the device
/// needs that are met, where the models run and why (said once, as the worker starts).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Machine {
    unmet: Vec<(Need, String)>,
    runs_on: Vec<(Need, String)>,
}

/// The kinds a worker takes, and those it leaves with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fit {
    pub takes: Vec<Work>,
    pub leaves: Vec<(Work, String)>,
}

impl Machine {
    /// Checks every need on this machine for `device` (only those some kind of `kinds` has).
    pub fn probe(device: Device, kinds: &[Work]) -> Machine {
        let (mut unmet, mut runs_on) = (Vec::new(), Vec::new());
        for need in Need::ALL {
            if !kinds.iter().any(|k| k.needs().contains(&need)) {
                continue;
            }
            let checked = match need {
                Need::OnnxRuntime => crate::runtime::check_loads().map(|()| None),
                Need::OnnxDevice => crate::runtime::resolve(device).map(Some),
                Need::CandleDevice => crate::tune::device(device).map(|(_, on)| Some(on)),
                Need::Encoder => crate::baseline::check_encoder().map(|()| None),
            };
            match checked {
                Ok(Some(on)) => runs_on.push((need, on)),
                Ok(None) => {}
                Err(e) => unmet.push((need, e.to_string())),
            }
        }
        Machine { unmet, runs_on }
    }

    /// A machine where each of `unmet` fails for its reason (for tests).
    pub fn with_unmet(unmet: Vec<(Need, String)>) -> Machine {
        Machine {
            unmet,
            runs_on: Vec::new(),
        }
    }

    /// Why `need` is not met here, if it is not.
    fn why(&self, need: Need) -> Option<&str> {
        self.unmet
            .iter()
            .find(|(n, _)| *n == need)
            .map(|(_, why)| why.as_str())
    }

    /// Sorts `kinds` into those this machine runs and those it cannot (the first unmet need's
    /// words).
    pub fn fit(&self, kinds: &[Work]) -> Fit {
        let (mut takes, mut leaves) = (Vec::new(), Vec::new());
        for &kind in kinds {
            match kind.needs().iter().find_map(|&n| self.why(n)) {
                Some(why) => leaves.push((kind, why.to_string())),
                None => takes.push(kind),
            }
        }
        Fit { takes, leaves }
    }

    /// In words, where the kinds of `kinds` run: candle's and ONNX Runtime's device, each with
    /// why, as the checks found them (for the worker's first line).
    pub fn devices(&self, kinds: &[Work]) -> String {
        let uses = |n: Need| kinds.iter().any(|k| k.needs().contains(&n));
        let said: Vec<String> = self
            .runs_on
            .iter()
            .filter(|(need, _)| uses(*need))
            .map(|(need, on)| match need {
                Need::CandleDevice => format!("candle trains on {on}"),
                Need::OnnxDevice => format!("ONNX Runtime runs on {on}"),
                // Not device needs: never recorded with a device.
                Need::OnnxRuntime | Need::Encoder => on.clone(),
            })
            .collect();
        if said.is_empty() {
            return "no model runs here (in-context learning calls its server)".into();
        }
        said.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_without_onnx_runtime_runs_only_what_needs_none() {
        let m = Machine::with_unmet(vec![(
            Need::OnnxRuntime,
            "ONNX Runtime was not found".into(),
        )]);
        let fit = m.fit(&Work::ALL);
        assert_eq!(
            fit.takes,
            [
                Work::Prompt,
                Work::InContext,
                Work::Crossfit,
                Work::CrossfitUpstream
            ]
        );
        let left: Vec<Work> = fit.leaves.iter().map(|(k, _)| *k).collect();
        assert_eq!(left, [Work::FrozenBaseline, Work::FineTuning, Work::Onnx]);
        assert!(fit
            .leaves
            .iter()
            .all(|(_, why)| why == "ONNX Runtime was not found"));
    }

    #[test]
    fn each_kind_is_left_for_its_first_unmet_need() {
        let m = Machine::with_unmet(vec![
            (Need::CandleDevice, "no CUDA build".into()),
            (Need::Encoder, "no encoder".into()),
        ]);
        let fit = m.fit(&[Work::FrozenBaseline, Work::FineTuning, Work::Onnx]);
        assert_eq!(fit.takes, [Work::Onnx]);
        assert_eq!(
            fit.leaves,
            [
                (Work::FrozenBaseline, "no encoder".to_string()),
                (Work::FineTuning, "no CUDA build".to_string())
            ]
        );
        // Nothing unmet: every kind is taken; in-context learning needs nothing at all.
        assert_eq!(Machine::default().fit(&Work::ALL).takes, Work::ALL);
        let none = Machine::with_unmet(Need::ALL.map(|n| (n, "x".into())).to_vec());
        assert_eq!(none.fit(&Work::ALL).takes, [Work::InContext]);
        assert_eq!(
            none.devices(&[Work::InContext]),
            "no model runs here (in-context learning calls its server)"
        );
    }
}
