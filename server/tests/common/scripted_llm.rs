//! A scripted completions server (OpenAI's API) for the in-context tests: each reply after a
//! delay of its own (so replies overtake each other), a 500 on request when asked.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The scripted server's reply to a prompt: a label chosen by the prompt's length, so that a
/// reply can be checked against its prompt.
pub fn reply_to(prompt: &str) -> &'static str {
    if prompt.len().is_multiple_of(2) {
        " positive"
    } else {
        " negative"
    }
}

/// Serves one completions request: after a delay set by the prompt (0 to 45 ms, so replies
/// overtake each other), the scripted reply, or a 500 for the request numbered `fail_at`.
fn serve(mut s: TcpStream, seen: &AtomicUsize, fail_at: &AtomicUsize) {
    let mut r = BufReader::new(s.try_clone().unwrap());
    let mut length = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        if line == "\r\n" || line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let prompt = v["prompt"].as_str().unwrap();
    let n = seen.fetch_add(1, Ordering::SeqCst) + 1;
    std::thread::sleep(Duration::from_millis((prompt.len() as u64 * 7) % 46));
    let (status, text) = if n == fail_at.load(Ordering::SeqCst) {
        (
            "500 Internal Server Error",
            "{\"error\": \"scripted\"}".to_string(),
        )
    } else {
        let choice = serde_json::json!({"choices": [{"text": reply_to(prompt)}]});
        ("200 OK", choice.to_string())
    };
    let _ = write!(
        s,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    );
}

/// A scripted server on a free port, and the number of the request it is to fail (counted
/// from its start; 0: none).
pub fn scripted() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (seen, fail_at) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let fail = fail_at.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let (seen, fail) = (seen.clone(), fail.clone());
            std::thread::spawn(move || serve(s, &seen, &fail));
        }
    });
    (format!("http://127.0.0.1:{port}/v1"), fail_at)
}
