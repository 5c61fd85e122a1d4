//! A Chrome DevTools Protocol client over one WebSocket: numbered commands
//! matched to their responses, and events handed to whoever listens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use super::dialect::Dialect;

/// How long an ordinary command may take. A full collection of a large heap
/// takes seconds; snapshots use their own, longer bound.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum InspectorError {
    #[error("cannot open the inspector WebSocket {url}")]
    Connect {
        url: String,
        #[source]
        source: Box<tokio_tungstenite::tungstenite::Error>,
    },
    #[error(
        "the inspector connection closed (the target exited, or another debugger took the session)"
    )]
    Disconnected,
    #[error("the inspector answered {method} with an error: {message}")]
    Protocol { method: String, message: String },
    #[error("the inspector did not answer {method} within {seconds} s")]
    Timeout { method: String, seconds: u64 },
    #[error("evaluating `{expression}` in the target threw: {message}")]
    Evaluation { expression: String, message: String },
}

/// A protocol event, such as `HeapProfiler.addHeapSnapshotChunk`.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub params: Value,
}

type Reply = oneshot::Sender<Result<Value, InspectorError>>;

struct Command {
    method: String,
    params: Value,
    reply: Reply,
}

/// Where events go: to each subscriber whose method prefix matches, and
/// nowhere when nobody listens, so unread events never pile up. A
/// subscriber that dropped its receiver is forgotten at the next event.
type EventSink = Arc<Mutex<Vec<Subscriber>>>;

struct Subscriber {
    prefix: String,
    sink: mpsc::UnboundedSender<Event>,
}

/// A TCP connection to a `ws://host:port/…` URL's host.
async fn tcp_to(url: &str) -> std::io::Result<tokio::net::TcpStream> {
    let invalid =
        |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_string());
    let parsed = url::Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
    let host = parsed.host_str().ok_or_else(|| invalid("no host"))?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| invalid("no port"))?;
    let addrs = crate::net::resolve::resolve(host, port)?;
    tokio::net::TcpStream::connect(addrs.as_slice()).await
}

/// The value an evaluation answered, or the error naming what it threw
/// (`thrown`, in either protocol's words).
pub(super) fn evaluated(
    expression: &str,
    answer: &Value,
    thrown: Option<&str>,
) -> Result<Value, InspectorError> {
    if let Some(message) = thrown {
        return Err(InspectorError::Evaluation {
            expression: expression.to_string(),
            message: message.to_string(),
        });
    }
    Ok(answer
        .pointer("/result/value")
        .cloned()
        .unwrap_or(Value::Null))
}

/// A handle on one protocol session; clones share the session.
#[derive(Clone)]
pub struct Inspector {
    commands: mpsc::UnboundedSender<Command>,
    events: EventSink,
    pub url: String,
    /// V8's protocol until the runtime is identified as Bun.
    pub dialect: Dialect,
}

impl Inspector {
    pub async fn connect(url: &str) -> Result<Inspector, InspectorError> {
        let failed = |e: tokio_tungstenite::tungstenite::Error| InspectorError::Connect {
            url: url.to_string(),
            source: Box::new(e),
        };
        // The TCP connection is ours, so that the host is resolved by
        // `net::resolve` (no system resolver for loopback names; see there).
        let stream = tcp_to(url).await.map_err(|e| failed(e.into()))?;
        let (socket, _) = tokio_tungstenite::client_async(url, stream)
            .await
            .map_err(failed)?;
        let (commands, command_queue) = mpsc::unbounded_channel();
        let events: EventSink = Arc::new(Mutex::new(Vec::new()));
        tokio::spawn(pump(socket, command_queue, events.clone()));
        Ok(Inspector {
            commands,
            events,
            url: url.to_string(),
            dialect: Dialect::V8,
        })
    }

    pub async fn call(&self, method: &str, params: Value) -> Result<Value, InspectorError> {
        self.call_within(method, params, COMMAND_TIMEOUT).await
    }

    pub async fn call_within(
        &self,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, InspectorError> {
        let (reply, answer) = oneshot::channel();
        let command = Command {
            method: method.to_string(),
            params,
            reply,
        };
        self.commands
            .send(command)
            .map_err(|_| InspectorError::Disconnected)?;
        match tokio::time::timeout(limit, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(InspectorError::Disconnected),
            Err(_) => Err(InspectorError::Timeout {
                method: method.to_string(),
                seconds: limit.as_secs(),
            }),
        }
    }

    /// Evaluates an expression in the target and returns its value as JSON.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, InspectorError> {
        self.evaluate_with(expression, false, false).await
    }

    /// Like `evaluate`, with the console's command-line API in scope, which
    /// in Node includes `require` even when the target is an ES module.
    pub async fn evaluate_in_console(&self, expression: &str) -> Result<Value, InspectorError> {
        self.evaluate_with(expression, true, false).await
    }

    /// Like `evaluate_in_console`, for an expression that returns a
    /// promise: answers with what the promise resolves to.
    pub async fn evaluate_promise(&self, expression: &str) -> Result<Value, InspectorError> {
        self.evaluate_with(expression, true, true).await
    }

    /// Like `evaluate_promise`, for work that may take longer than a
    /// command does (a batch of a function's calls): waits up to `limit`.
    pub async fn evaluate_promise_within(
        &self,
        expression: &str,
        limit: Duration,
    ) -> Result<Value, InspectorError> {
        self.evaluate_within(expression, true, true, limit).await
    }

    async fn evaluate_with(
        &self,
        expression: &str,
        command_line_api: bool,
        await_promise: bool,
    ) -> Result<Value, InspectorError> {
        self.evaluate_within(expression, command_line_api, await_promise, COMMAND_TIMEOUT)
            .await
    }

    async fn evaluate_within(
        &self,
        expression: &str,
        command_line_api: bool,
        await_promise: bool,
        limit: Duration,
    ) -> Result<Value, InspectorError> {
        if self.dialect == Dialect::WebKit {
            return self.evaluate_webkit(expression, await_promise, limit).await;
        }
        let params = json!({
            "expression": expression,
            "returnByValue": true,
            "silent": true,
            "includeCommandLineAPI": command_line_api,
            "awaitPromise": await_promise,
        });
        let result = self.call_within("Runtime.evaluate", params, limit).await?;
        let thrown = result.get("exceptionDetails").map(|details| {
            details
                .pointer("/exception/description")
                .or_else(|| details.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("an exception")
        });
        evaluated(expression, &result, thrown)
    }

    /// Forces a full, synchronous garbage collection in the target, in the
    /// session's protocol.
    pub async fn collect_garbage(&self) -> Result<(), InspectorError> {
        let method = match self.dialect {
            Dialect::V8 => "HeapProfiler.collectGarbage",
            Dialect::WebKit => "Heap.gc",
        };
        self.call(method, json!({})).await.map(drop)
    }

    /// The same session, spoken in `dialect`.
    pub fn speaking(mut self, dialect: Dialect) -> Inspector {
        self.dialect = dialect;
        self
    }

    /// Receives every protocol event from now on, until the receiver is
    /// dropped. The channel ends when the connection does.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Event> {
        self.subscribe_to("")
    }

    /// Receives the events whose method starts with `prefix`
    /// (`NodeWorker.`), so a long-lived listener is not handed a snapshot's
    /// chunks.
    pub fn subscribe_to(&self, prefix: &str) -> mpsc::UnboundedReceiver<Event> {
        let (sink, events) = mpsc::unbounded_channel();
        self.events
            .lock()
            .expect("event sink lock")
            .push(Subscriber {
                prefix: prefix.to_string(),
                sink,
            });
        events
    }

    /// A handle that does not keep the connection open: background tasks
    /// hold this, so that dropping the last real handle closes the session
    /// (Node waits for its debugger to leave before it exits).
    pub fn downgrade(&self) -> WeakInspector {
        WeakInspector {
            commands: self.commands.downgrade(),
            events: self.events.clone(),
            url: self.url.clone(),
            dialect: self.dialect,
        }
    }

    /// A session with one of the target's worker threads, carried inside
    /// this connection by the `NodeWorker` domain: the same API as the main
    /// session (calls, evaluation, events, snapshots), each command wrapped
    /// in `NodeWorker.sendMessageToWorker` and each answer unwrapped from
    /// `NodeWorker.receivedMessageFromWorker`. It ends when the worker
    /// detaches or this connection closes.
    pub fn worker_session(&self, session_id: &str, label: &str) -> Inspector {
        let (commands, command_queue) = mpsc::unbounded_channel();
        let events: EventSink = Arc::new(Mutex::new(Vec::new()));
        let incoming = self.subscribe_to("NodeWorker.");
        tokio::spawn(pump_worker(
            self.downgrade(),
            session_id.to_string(),
            incoming,
            command_queue,
            events.clone(),
        ));
        Inspector {
            commands,
            events,
            url: format!("{} ({label})", self.url),
            dialect: self.dialect,
        }
    }
}

/// An `Inspector` that does not keep its connection open (`downgrade`).
#[derive(Clone)]
pub struct WeakInspector {
    commands: mpsc::WeakUnboundedSender<Command>,
    events: EventSink,
    url: String,
    dialect: Dialect,
}

impl WeakInspector {
    /// The session, while some real handle still holds it.
    pub fn upgrade(&self) -> Option<Inspector> {
        Some(Inspector {
            commands: self.commands.upgrade()?,
            events: self.events.clone(),
            url: self.url.clone(),
            dialect: self.dialect,
        })
    }
}

/// The worker session's half of `worker_session`: numbers commands, sends
/// them through the parent, routes the worker's answers and events.
async fn pump_worker(
    parent: WeakInspector,
    session_id: String,
    mut incoming: mpsc::UnboundedReceiver<Event>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: EventSink,
) {
    let mut pending = Pending::default();
    loop {
        tokio::select! {
            biased;
            event = incoming.recv() => {
                let Some(event) = event else { break };
                let ours = event.params.get("sessionId").and_then(Value::as_str)
                    == Some(session_id.as_str());
                if !ours {
                    continue;
                }
                if event.method == "NodeWorker.detachedFromWorker" {
                    break;
                }
                let message = event.params.get("message").and_then(Value::as_str);
                if let Some(value) = message.and_then(|m| serde_json::from_str(m).ok()) {
                    route_message(value, &mut pending.waiting, &events);
                }
            }
            command = commands.recv() => {
                let Some(command) = command else { break };
                let text = pending.number(command);
                let wrapped = json!({ "sessionId": session_id, "message": text });
                // Not awaited here: the answer comes back as an event, and a
                // snapshot's chunks must keep flowing meanwhile.
                let Some(parent) = parent.upgrade() else { break };
                tokio::spawn(async move {
                    let _ = parent.call("NodeWorker.sendMessageToWorker", wrapped).await;
                });
            }
        }
    }
    events.lock().expect("event sink lock").clear();
}

/// The commands sent and not yet answered, by the id each was given.
#[derive(Default)]
struct Pending {
    waiting: HashMap<u64, (String, Reply)>,
    last_id: u64,
}

impl Pending {
    /// Gives `command` the next id, remembers who waits for its answer,
    /// and returns the message text to send.
    fn number(&mut self, command: Command) -> String {
        self.last_id += 1;
        let id = self.last_id;
        let text = json!({ "id": id, "method": command.method, "params": command.params });
        self.waiting.insert(id, (command.method, command.reply));
        text.to_string()
    }
}

/// Owns the socket: writes queued commands, routes responses to their
/// callers and events to the event channel. When the socket ends, every
/// waiting caller gets `Disconnected` (their reply senders are dropped).
async fn pump<S>(
    socket: tokio_tungstenite::WebSocketStream<S>,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: EventSink,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut write, mut read) = socket.split();
    let mut pending = Pending::default();
    loop {
        tokio::select! {
            // Incoming first: a snapshot's chunks must not wait behind commands.
            biased;
            message = read.next() => {
                let text = match message {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue,
                };
                match parse_message(&text) {
                    Ok(value) => route_message(value, &mut pending.waiting, &events),
                    Err(error) => refuse_unreadable(&text, &error, &mut pending.waiting),
                }
            }
            command = commands.recv() => {
                let Some(command) = command else { break };
                let text = pending.number(command);
                if write.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
        }
    }
    // Dropping the sinks ends subscribers' channels.
    events.lock().expect("event sink lock").clear();
}

/// Parses one protocol message, however deep. serde_json stops at 128
/// levels by default, and a sampling heap profile nests one level per
/// stack frame: a Next.js server's React rendering stacks run deeper, so
/// its `getSamplingProfile` answer failed to parse and was dropped, and
/// the diagnosis waited out the command's two minutes. `serde_stacker`
/// grows the stack as the parse goes deeper instead of overflowing it.
pub fn parse_message(text: &str) -> serde_json::Result<Value> {
    use serde::Deserialize;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut deserializer))?;
    deserializer.end()?;
    Ok(value)
}

/// Drops a value however deep without recursing: serde_json's own drop
/// recurses once per level, which a deep profile would overflow the stack
/// with, as the parse would without `serde_stacker`.
pub fn drop_deep(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// A message that does not parse is not dropped in silence: when it is an
/// answer (`{"id":N,…`), its caller learns at once why, instead of waiting
/// for its time limit.
fn refuse_unreadable(
    text: &str,
    error: &serde_json::Error,
    pending: &mut HashMap<u64, (String, Reply)>,
) {
    let id = text
        .strip_prefix("{\"id\":")
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse::<u64>().ok());
    if let Some((method, reply)) = id.and_then(|id| pending.remove(&id)) {
        let _ = reply.send(Err(InspectorError::Protocol {
            method,
            message: format!(
                "its answer ({} bytes) is not JSON leakcheck can read: {error}",
                text.len()
            ),
        }));
    }
}

fn route_message(
    mut value: Value,
    pending: &mut HashMap<u64, (String, Reply)>,
    events: &EventSink,
) {
    if let Some(id) = value.get("id").and_then(Value::as_u64) {
        let Some((method, reply)) = pending.remove(&id) else {
            return;
        };
        let result = match value.get_mut("error") {
            Some(error) => Err(InspectorError::Protocol {
                method,
                message: error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string(),
            }),
            None => Ok(value
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
        };
        let _ = reply.send(result);
    } else if let Some(method) = value.get("method").and_then(Value::as_str) {
        let method = method.to_string();
        let params = value
            .get_mut("params")
            .map(Value::take)
            .unwrap_or(Value::Null);
        let mut subscribers = events.lock().expect("event sink lock");
        subscribers.retain(|s| !s.sink.is_closed());
        let mut matching = subscribers
            .iter()
            .filter(|s| method.starts_with(&s.prefix))
            .peekable();
        // The last one takes the event itself: a snapshot chunk is not
        // copied for a single listener.
        let mut event = Some(Event {
            method: method.clone(),
            params,
        });
        while let Some(subscriber) = matching.next() {
            let this = if matching.peek().is_some() {
                event.clone()
            } else {
                event.take()
            };
            if let Some(this) = this {
                let _ = subscriber.sink.send(this);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_nested_thousands_deep_parses() {
        // One level per stack frame: React's rendering stacks pass 128.
        let depth = 5000;
        let text = format!(
            "{{\"id\":7,\"result\":{}{}}}",
            "{\"children\":[".repeat(depth),
            "]}".repeat(depth)
        );
        let value = parse_message(&text).expect("deep JSON parses");
        assert_eq!(value["id"], 7);
        drop_deep(value);
    }

    #[test]
    fn an_unreadable_answer_fails_its_caller_at_once() {
        let (reply, mut answer) = oneshot::channel();
        let mut pending = HashMap::new();
        pending.insert(
            12u64,
            ("HeapProfiler.getSamplingProfile".to_string(), reply),
        );
        let text = "{\"id\":12,\"result\":{\"broken\":";
        let error = parse_message(text).unwrap_err();
        refuse_unreadable(text, &error, &mut pending);
        assert!(pending.is_empty());
        let answered = answer.try_recv().expect("answered");
        assert!(
            matches!(answered, Err(InspectorError::Protocol { .. })),
            "{answered:?}"
        );
    }
}
