//! The machines page's upload of another system's predictions (e.g. in-context outputs of a large
//! language model) to `POST /import/predictions`, for one of the imported tasks.

use super::page_fields::name_select;
use crate::wire::machine::RunRow;
use leptos::prelude::*;

/// Sends the chosen file to `POST /import/predictions`; returns the server's answer.
#[cfg(feature = "hydrate")]
async fn send_upload(query: String, file: web_sys::File) -> String {
    use wasm_bindgen::JsCast;
    // A multipart form with the file in its `file` field, as a plain form would post it.
    let Ok(form) = web_sys::FormData::new() else {
        return "no form data in this browser".into();
    };
    if form
        .append_with_blob_and_filename("file", &file, &file.name())
        .is_err()
    {
        return "The file could not be read; choose it again.".into();
    }
    let init = web_sys::RequestInit::new();
    init.set_method("POST");
    init.set_body(&form.into());
    let Some(window) = web_sys::window() else {
        return "no browser window".into();
    };
    let sent = wasm_bindgen_futures::JsFuture::from(
        window.fetch_with_str_and_init(&format!("/import/predictions?{query}"), &init),
    )
    .await;
    let Ok(resp) = sent.map(|r| r.unchecked_into::<web_sys::Response>()) else {
        return "The upload did not reach the server; try again.".into();
    };
    let text = match resp.text() {
        Ok(p) => wasm_bindgen_futures::JsFuture::from(p)
            .await
            .ok()
            .and_then(|t| t.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    if resp.ok() {
        format!("Stored: {text}")
    } else {
        format!("Not stored: {text}")
    }
}

/// Upload of another system's predictions (e.g. in-context outputs of a large language model).
/// The upload form; `tasks`: the imported tasks with a test set, the choices of its task field.
#[component]
pub fn UploadForm(
    runs: Resource<Result<Vec<RunRow>, crate::error::AppError>>,
    tasks: Vec<String>,
) -> impl IntoView {
    let (message, set_message) = signal(String::new());
    let task = RwSignal::new(tasks.first().cloned().unwrap_or_default());
    let system = NodeRef::<leptos::html::Input>::new();
    let k = NodeRef::<leptos::html::Input>::new();
    let split = NodeRef::<leptos::html::Input>::new();
    let file = NodeRef::<leptos::html::Input>::new();
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        #[cfg(feature = "hydrate")]
        {
            let value =
                |r: NodeRef<leptos::html::Input>| r.get().map(|i| i.value()).unwrap_or_default();
            let Some(chosen) = file.get().and_then(|i| i.files()).and_then(|f| f.get(0)) else {
                set_message.set("Choose a predictions file first.".into());
                return;
            };
            let enc = |s: String| domain::crowd::url_encode(&s);
            let query = format!(
                "task={}&system={}&k={}&split={}",
                enc(task.get_untracked()),
                enc(value(system)),
                enc(value(k)),
                enc(value(split)),
            );
            set_message.set("Uploading…".into());
            leptos::task::spawn_local(async move {
                set_message.set(send_upload(query, chosen).await);
                runs.refetch();
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (task, system, k, split, file, runs, set_message);
    };
    view! {
        <form class="upload" on:submit=submit>
            <h2>"Upload predictions"</h2>
            <p class="hint">
                "Official CLUES lines " <code>"{\"id\", \"answer\": [...]}"</code> ", lines "
                <code>"{\"<id>\": [spans]}"</code>
                " or one JSON object of id → spans; every test item once."
            </p>
            {name_select("Task", "task", tasks, task)}
            <label>"System " <input name="system" required node_ref=system /></label>
            <label>"k " <input name="k" type="number" min="0" value="0" node_ref=k /></label>
            <label>
                "Split " <input name="split" type="number" min="0" value="0" node_ref=split />
            </label>
            <label>"Predictions file " <input name="file" type="file" node_ref=file /></label>
            <button type="submit">"Upload"</button>
            <p class="upload-result">{message}</p>
        </form>
    }
}
