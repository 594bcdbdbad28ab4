//! Server functions (public HTTP endpoints) and the data they send to the browser.
//! Each is one call of `ssr::request::serve` under the guard of the roles it allows (`Staff`,
//! `Admin`, `Worker`, `Visitor`); none ever sends a test item's gold answer.
pub mod auth;
pub mod crossfit;
pub mod machine;
pub mod platform;
pub mod report;
pub mod study;
pub mod tasks;

mod text_json;
pub use text_json::TextJson;

/// The paths of the server functions that take JSON (`input = Json`); every other one takes a
/// URL-encoded form. The server refuses a call in any other content type: a page of another
/// site can post `text/plain` without asking first, never `application/json`.
#[cfg(feature = "ssr")]
pub fn json_calls() -> [&'static str; 5] {
    use leptos::server_fn::ServerFn;
    [
        machine::QueueLearner::PATH,
        study::CreateStudy::PATH,
        study::UpdateStudy::PATH,
        study::SubmitAnswer::PATH,
        study::AnswerQuestionnaire::PATH,
    ]
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    /// Every server function declared with `input = Json` is in `json_calls`, and no other.
    #[test]
    fn json_calls_are_the_json_server_functions() {
        let mut declared = Vec::new();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/api");
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in text.lines().filter(|l| l.starts_with("#[server(")) {
                if line.contains("input = Json") {
                    let endpoint = line.split('"').nth(1).unwrap();
                    declared.push(format!("/api/{endpoint}"));
                }
            }
        }
        let mut listed: Vec<String> = super::json_calls().iter().map(|p| p.to_string()).collect();
        declared.sort();
        listed.sort();
        assert_eq!(declared, listed);
    }
}
