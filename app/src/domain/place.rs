//! A worker's place in one scenario of a study, as `assignments.status` records it: taken and
//! in progress, finished (the test set done), or abandoned (released after the time-out).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaceStatus {
    Active,
    Finished,
    Abandoned,
}

impl PlaceStatus {
    pub const ALL: [PlaceStatus; 3] = [
        PlaceStatus::Active,
        PlaceStatus::Finished,
        PlaceStatus::Abandoned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PlaceStatus::Active => "active",
            PlaceStatus::Finished => "finished",
            PlaceStatus::Abandoned => "abandoned",
        }
    }

    pub fn parse(s: &str) -> Option<PlaceStatus> {
        PlaceStatus::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::PlaceStatus;

    #[test]
    fn each_status_reads_back_from_its_name_and_nothing_else_does() {
        for p in PlaceStatus::ALL {
            assert_eq!(PlaceStatus::parse(p.as_str()), Some(p));
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.as_str())
            );
        }
        assert_eq!(PlaceStatus::parse("Active"), None);
        assert_eq!(PlaceStatus::parse(""), None);
    }
}
