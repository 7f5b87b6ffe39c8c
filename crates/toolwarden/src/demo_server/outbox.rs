//! Everything the server writes, and the requests it sends to the client and waits on.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::jsonrpc;

/// The one way to stdout: each message is written as one whole line under one lock, so
/// concurrent calls never interleave their bytes.
#[derive(Clone)]
pub struct Outbox {
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
}

impl Outbox {
    pub fn new(writer: Box<dyn Write + Send>) -> Self {
        Self {
            writer: Arc::new(Mutex::new(writer)),
        }
    }

    pub fn send(&self, message: &Value) -> io::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        writer.write_all(&line)?;
        writer.flush()
    }
}

/// Why a request to the client got no answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("the client did not answer within {} ms", .0.as_millis())]
    TimedOut(Duration),
    #[error("the call was cancelled")]
    Cancelled,
    #[error("the client closed the connection")]
    Disconnected,
    #[error("the request could not be written: {0}")]
    Write(#[from] io::Error),
}

type Answer = Result<Value, Value>;

/// Server-to-client requests in flight, in an id space of their own (`demo-srv-N`) so they
/// never collide with the client's ids.
#[derive(Default)]
pub struct ClientRequests {
    next_id: AtomicU64,
    pending: Mutex<HashMap<String, Sender<Answer>>>,
    closed: AtomicBool,
}

const CANCEL_POLL: Duration = Duration::from_millis(20);

impl ClientRequests {
    /// Sends `method` to the client and waits for its answer: `Ok(result)` or `Err(error)`.
    pub fn ask(
        &self,
        outbox: &Outbox,
        method: &str,
        params: Value,
        timeout: Duration,
        cancelled: &AtomicBool,
    ) -> Result<Answer, AskError> {
        let id = format!(
            "demo-srv-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed) + 1
        );
        let (sender, receiver) = mpsc::channel();
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            // Checked under the lock so `close` cannot slip in between and leave us waiting.
            if self.closed.load(Ordering::SeqCst) {
                return Err(AskError::Disconnected);
            }
            pending.insert(id.clone(), sender);
        }
        let outcome = self.wait(outbox, &id, method, params, &receiver, timeout, cancelled);
        self.pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id);
        outcome
    }

    #[allow(clippy::too_many_arguments)]
    fn wait(
        &self,
        outbox: &Outbox,
        id: &str,
        method: &str,
        params: Value,
        receiver: &mpsc::Receiver<Answer>,
        timeout: Duration,
        cancelled: &AtomicBool,
    ) -> Result<Answer, AskError> {
        outbox.send(&jsonrpc::request(id, method, params))?;
        let deadline = Instant::now() + timeout;
        loop {
            if cancelled.load(Ordering::SeqCst) {
                return Err(AskError::Cancelled);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(AskError::TimedOut(timeout));
            }
            match receiver.recv_timeout(left.min(CANCEL_POLL)) {
                Ok(answer) => return Ok(answer),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(AskError::Disconnected),
            }
        }
    }

    /// Hands the client's answer to the waiting call; false when nobody waits for that id.
    pub fn deliver(&self, id: &Value, answer: Answer) -> bool {
        let Some(id) = id.as_str() else {
            return false;
        };
        let sender = self
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
        sender.is_some_and(|sender| sender.send(answer).is_ok())
    }

    /// No answer can come any more: wake every waiting call and refuse new requests.
    pub fn close(&self) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        self.closed.store(true, Ordering::SeqCst);
        pending.clear();
    }
}

/// An in-memory stdout for tests that read back what the server wrote.
#[cfg(test)]
pub mod test_support {
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    use serde_json::Value;

    #[derive(Clone, Default)]
    pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

    impl Write for SharedBuffer {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl SharedBuffer {
        pub fn lines(&self) -> Vec<Value> {
            let bytes = self.0.lock().unwrap().clone();
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str(line).unwrap())
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::SharedBuffer;
    use super::*;
    use serde_json::json;
    use std::thread;

    #[test]
    fn each_message_is_one_line() {
        let buffer = SharedBuffer::default();
        let outbox = Outbox::new(Box::new(buffer.clone()));
        outbox.send(&json!({"text": "two\nlines"})).unwrap();
        outbox.send(&json!({"n": 2})).unwrap();
        assert_eq!(
            buffer.lines(),
            vec![json!({"text": "two\nlines"}), json!({"n": 2})]
        );
    }

    #[test]
    fn an_answer_reaches_the_waiting_caller() {
        let buffer = SharedBuffer::default();
        let outbox = Outbox::new(Box::new(buffer.clone()));
        let requests = Arc::new(ClientRequests::default());
        let asking = {
            let requests = Arc::clone(&requests);
            thread::spawn(move || {
                requests.ask(
                    &outbox,
                    "roots/list",
                    json!({}),
                    Duration::from_secs(5),
                    &AtomicBool::new(false),
                )
            })
        };
        let sent = loop {
            if let Some(sent) = buffer.lines().pop() {
                break sent;
            }
            thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(sent["id"], "demo-srv-1");
        assert_eq!(sent["method"], "roots/list");
        assert!(!requests.deliver(&json!("demo-srv-9"), Ok(json!({}))));
        assert!(requests.deliver(&sent["id"], Ok(json!({"roots": []}))));
        assert_eq!(asking.join().unwrap().unwrap(), Ok(json!({"roots": []})));
    }

    #[test]
    fn waiting_ends_on_timeout_cancel_and_close() {
        let outbox = Outbox::new(Box::new(SharedBuffer::default()));
        let requests = ClientRequests::default();
        let timed_out = requests.ask(
            &outbox,
            "roots/list",
            json!({}),
            Duration::from_millis(30),
            &AtomicBool::new(false),
        );
        assert!(matches!(timed_out, Err(AskError::TimedOut(_))));
        let cancelled = requests.ask(
            &outbox,
            "roots/list",
            json!({}),
            Duration::from_secs(5),
            &AtomicBool::new(true),
        );
        assert!(matches!(cancelled, Err(AskError::Cancelled)));
        requests.close();
        let closed = requests.ask(
            &outbox,
            "roots/list",
            json!({}),
            Duration::from_secs(5),
            &AtomicBool::new(false),
        );
        assert!(matches!(closed, Err(AskError::Disconnected)));
    }
}
