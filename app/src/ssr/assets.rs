//! The browser assets by name: the content-hashed names that .ci/build records in the site's
//! hash files (`hash.txt`, `hash-worker.txt`, `hash-worker-spans.txt`), and which bundle a page
//! loads.

use domain::task::AnswerForm;
use leptos::config::LeptosOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The output name of the browser bundle (`/pkg/clues-lab.js`, `.wasm`, `.css`).
pub const OUTPUT_NAME: &str = "clues-lab";

/// The crowd worker's bundles (the study page alone), built beside the staff bundle: the
/// span form's code is a sixth of the worker's bundle, and only span studies use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerBundle {
    /// Label and free-text studies (`clues-lab-worker`).
    Answers,
    /// Span studies, with the span form (`clues-lab-worker-spans`): hydrates every study page.
    Spans,
}

impl WorkerBundle {
    /// The bundle of a study whose items are answered with `form`.
    pub fn for_form(form: AnswerForm) -> Self {
        match form {
            AnswerForm::Label | AnswerForm::Text => WorkerBundle::Answers,
            AnswerForm::Spans => WorkerBundle::Spans,
        }
    }

    pub fn output_name(self) -> &'static str {
        match self {
            WorkerBundle::Answers => "clues-lab-worker",
            WorkerBundle::Spans => "clues-lab-worker-spans",
        }
    }
}

fn hash_file(site_root: &str, output_name: &str) -> PathBuf {
    let name = match output_name.strip_prefix(OUTPUT_NAME) {
        Some(rest) if !rest.is_empty() => format!("hash{rest}.txt"),
        _ => "hash.txt".into(),
    };
    absolute(site_root).join(name)
}

fn absolute(dir: &str) -> PathBuf {
    std::path::absolute(dir).unwrap_or_else(|_| PathBuf::from(dir))
}

/// The hash of `kind` (`js`, `wasm`, `css`) in a hash file's `kind: hash` lines.
fn hash_of(file: &Path, kind: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == kind).then(|| v.trim().to_string())
    })
}

/// The stylesheet's path: `/pkg/clues-lab.<hash>.css` after a hashing build.
pub fn stylesheet(options: &LeptosOptions) -> String {
    match hash_of(&hash_file(&options.site_root, OUTPUT_NAME), "css") {
        Some(h) => format!("/{}/{OUTPUT_NAME}.{h}.css", options.site_pkg_dir),
        None => format!("/{}/{OUTPUT_NAME}.css", options.site_pkg_dir),
    }
}

/// A worker bundle's script and wasm paths when a hashing build made it: the start page
/// preloads them, so the study page finds them cached.
pub fn worker_bundle(options: &LeptosOptions, bundle: WorkerBundle) -> Option<(String, String)> {
    hashed_bundle(options, bundle.output_name())
}

/// A bundle's content-hashed script and wasm paths, when a hashing build recorded them.
fn hashed_bundle(options: &LeptosOptions, output_name: &str) -> Option<(String, String)> {
    let file = hash_file(&options.site_root, output_name);
    let pkg = &options.site_pkg_dir;
    Some((
        format!("/{pkg}/{output_name}.{}.js", hash_of(&file, "js")?),
        format!("/{pkg}/{output_name}.{}.wasm", hash_of(&file, "wasm")?),
    ))
}

/// Whether a worker's bundle was built (hashed or not).
fn worker_bundle_built(options: &LeptosOptions, bundle: WorkerBundle) -> bool {
    let root = absolute(&options.site_root);
    hash_file(&options.site_root, bundle.output_name()).exists()
        || root
            .join(&*options.site_pkg_dir)
            .join(format!("{}.js", bundle.output_name()))
            .exists()
}

/// The options `HydrationScripts` renders a page with, and the stylesheet's path. The
/// request (from the context leptos_axum provides) picks the bundle: on `/study/...` pages
/// the worker's bundle that the router's `WorkerBundle` extension names (the span one, which
/// hydrates every study page, without it), where it was built.
pub fn for_page(options: LeptosOptions) -> (LeptosOptions, String) {
    let css = stylesheet(&options);
    let parts = leptos::prelude::use_context::<http::request::Parts>();
    let mut options = options;
    if let Some(parts) = parts.filter(|p| p.uri.path().starts_with("/study/")) {
        let bundle = parts
            .extensions
            .get::<WorkerBundle>()
            .copied()
            .unwrap_or(WorkerBundle::Spans);
        if worker_bundle_built(&options, bundle) {
            options.output_name = Arc::from(bundle.output_name());
        }
    }
    let hashes = hash_file(&options.site_root, &options.output_name);
    if hashes.exists() {
        options.hash_files = true;
        // An absolute path: Leptos joins it to the executable's folder otherwise.
        options.hash_file = Arc::from(hashes.to_string_lossy().as_ref());
    }
    (options, css)
}

/// The request's path, from the context leptos_axum provides ("" outside a request).
fn request_path() -> String {
    leptos::prelude::use_context::<http::request::Parts>()
        .map(|p| p.uri.path().to_string())
        .unwrap_or_default()
}

/// The bundle's script and wasm when the page loads them only after it has painted: the
/// researcher dashboard, a page read first, sent whole, whose bundle (the staff one, about
/// 620 KB compressed) would otherwise be fetched beside its first paint and, on a phone's
/// network, delay it (Lighthouse counted its download into the paint whenever it ended
/// first). Its links and downloads work before it hydrates. `None` for other pages, and
/// without a hashing build (Leptos' own loader, deferred, then serves the dashboard).
pub fn after_paint_bundle(options: &LeptosOptions) -> Option<(String, String)> {
    is_dashboard()
        .then(|| hashed_bundle(options, &options.output_name))
        .flatten()
}

/// Whether this render is of the researcher dashboard.
pub fn is_dashboard() -> bool {
    request_path() == "/dashboard"
}

/// The script that loads a bundle once the browser reports the page's first contentful paint
/// (a paint observer, which also sees a paint that came before it) and hydrates it. A hidden
/// tab paints nothing, and a browser without paint entries reports none: there it loads at
/// once; and after 3 s in any case. The script and the wasm download side by side. Leptos'
/// `HydrationScripts` does the same without the wait, and preloads both from the page's head.
pub fn after_paint_script(js: &str, wasm: &str) -> String {
    AFTER_PAINT_SCRIPT
        .replace("JS_PATH", &format!("{js:?}"))
        .replace("WASM_PATH", &format!("{wasm:?}"))
}

const AFTER_PAINT_SCRIPT: &str = "let started = false;\
const hydrate = () => {\
  if (started) return;\
  started = true;\
  Promise.all([import(JS_PATH), fetch(WASM_PATH)])\
    .then(([m, wasm]) => m.default({ module_or_path: wasm }).then(() => m.hydrate()));\
};\
if (document.visibilityState === 'hidden'\
    || !(PerformanceObserver.supportedEntryTypes || []).includes('paint')) {\
  hydrate();\
} else {\
  new PerformanceObserver((list, observer) => {\
    if (list.getEntriesByName('first-contentful-paint').length) {\
      observer.disconnect();\
      setTimeout(hydrate, 0);\
    }\
  }).observe({ type: 'paint', buffered: true });\
  setTimeout(hydrate, 3000);\
}";

/// Inside a page's render: its `Content-Security-Policy` lets only the site's own scripts and
/// the inline ones that carry this response's nonce run (`domain::crowd::script_policy`; the
/// router's middleware adds who may frame the page).
pub fn restrict_scripts() {
    let nonce = leptos::nonce::use_nonce();
    let policy = domain::crowd::script_policy(nonce.as_deref());
    let options = leptos::prelude::use_context::<leptos_axum::ResponseOptions>();
    if let (Some(options), Ok(value)) = (options, http::HeaderValue::from_str(&policy)) {
        options.insert_header(http::header::CONTENT_SECURITY_POLICY, value);
    }
}

/// A fresh nonce for one response's inline script (128 random bits, hex), for pages rendered
/// outside Leptos (the study link's start page).
pub fn fresh_nonce() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Whether a `/pkg/` file name carries a content hash (`name.<hex>.ext`): such a file never
/// changes and may be cached for good.
pub fn is_hashed(path: &str) -> bool {
    let Some(file) = path.strip_prefix("/pkg/") else {
        return false;
    };
    let parts: Vec<&str> = file.split('.').collect();
    parts.len() >= 3 && parts[1].len() >= 8 && parts[1].bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_and_hash_files() {
        assert!(is_hashed("/pkg/clues-lab.0123abcd4567ef89.wasm"));
        assert!(is_hashed("/pkg/clues-lab-worker.0123abcd4567ef89.js"));
        assert!(!is_hashed("/pkg/clues-lab.wasm"));
        assert!(!is_hashed("/pkg/clues-lab.css"));
        assert!(!is_hashed("/study/1"));
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_str().unwrap();
        assert!(hash_file(root, OUTPUT_NAME).ends_with("hash.txt"));
        let answers = WorkerBundle::Answers.output_name();
        assert!(hash_file(root, answers).ends_with("hash-worker.txt"));
        let spans = WorkerBundle::Spans.output_name();
        assert!(hash_file(root, spans).ends_with("hash-worker-spans.txt"));
        std::fs::write(
            dir.path().join("hash.txt"),
            "js: aa11\nwasm: bb22\ncss: cc33\n",
        )
        .unwrap();
        let options = LeptosOptions::builder()
            .output_name(OUTPUT_NAME)
            .site_root(root)
            .build();
        assert_eq!(stylesheet(&options), "/pkg/clues-lab.cc33.css");
        assert_eq!(worker_bundle(&options, WorkerBundle::Answers), None);
        std::fs::write(dir.path().join("hash-worker.txt"), "js: dd44\nwasm: ee55\n").unwrap();
        assert_eq!(
            worker_bundle(&options, WorkerBundle::Answers),
            Some((
                "/pkg/clues-lab-worker.dd44.js".into(),
                "/pkg/clues-lab-worker.ee55.wasm".into()
            ))
        );
        assert_eq!(worker_bundle(&options, WorkerBundle::Spans), None);
        let (o, _) = for_page(options.clone());
        assert!(o.hash_files);
        assert!(o.hash_file.starts_with('/'));
        std::fs::remove_file(dir.path().join("hash.txt")).unwrap();
        assert_eq!(stylesheet(&options), "/pkg/clues-lab.css");
        assert!(!for_page(options).0.hash_files);
    }

    #[test]
    fn the_after_paint_loader_names_both_files_and_waits_for_the_paint() {
        let options = LeptosOptions::builder().output_name(OUTPUT_NAME).build();
        // Outside a request (no path) no page is the dashboard.
        assert_eq!(after_paint_bundle(&options), None);
        let script = after_paint_script("/pkg/clues-lab.aa11.js", "/pkg/clues-lab.bb22.wasm");
        assert!(script
            .contains(r#"import("/pkg/clues-lab.aa11.js"), fetch("/pkg/clues-lab.bb22.wasm")"#));
        assert!(script.contains("'first-contentful-paint'"));
        assert!(script.contains("buffered: true"));
        assert!(!script.contains("JS_PATH") && !script.contains("WASM_PATH"));
    }
}
