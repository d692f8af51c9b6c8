//! The outbox's queue: ordering, the end of a stream, room, a reader gone.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use super::{Message, Outbox, Reply};

fn note(text: &str) -> Message {
    Message::Notification(text.as_bytes().to_vec())
}

fn text(out: Option<super::Outgoing>) -> Option<String> {
    out.map(|o| String::from_utf8(o.body().to_vec()).expect("utf-8"))
}

#[tokio::test]
async fn queued_messages_come_in_order_then_the_end_once_every_sender_is_gone() {
    let (outbox, mut inbox) = Outbox::channel();
    let clone = outbox.clone();
    assert!(outbox.send(note("one")).await);
    assert!(clone.send(note("two")).await);
    drop(outbox);
    assert_eq!(text(inbox.recv().await).as_deref(), Some("one"));
    assert!(inbox.try_recv().is_some(), "two is queued");
    assert!(inbox.try_recv().is_none(), "a clone may still send");
    let waiting = tokio::spawn(async move { (inbox.recv().await.is_none(), inbox) });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!waiting.is_finished(), "recv waits while a sender lives");
    drop(clone);
    let (ended, mut inbox) = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the last sender's drop woke the reader")
        .expect("recv");
    assert!(
        ended,
        "the last sender's drop wakes the reader and ends the stream"
    );
    assert!(inbox.recv().await.is_none());
    assert!(inbox.try_recv().is_none());
}

#[tokio::test]
async fn end_ends_the_stream_after_what_was_queued_even_with_senders_alive() {
    let (outbox, mut inbox) = Outbox::channel();
    assert!(outbox.send(note("last")).await);
    outbox.end();
    assert!(
        outbox.send(note("after the end")).await,
        "queued, never read"
    );
    assert_eq!(text(inbox.recv().await).as_deref(), Some("last"));
    assert!(inbox.recv().await.is_none());
    assert!(inbox.recv().await.is_none(), "ended stays ended");
}

#[tokio::test]
async fn a_sender_waits_for_room_until_a_written_message_is_dropped() {
    let (outbox, mut inbox) = Outbox::with_capacity(200);
    let big = "x".repeat(120);
    assert!(outbox.send(note(&big)).await);
    let second = {
        let outbox = outbox.clone();
        let big = big.clone();
        tokio::spawn(async move { outbox.send(note(&big)).await })
    };
    let first = inbox.recv().await.expect("first");
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!second.is_finished(), "no room while the first is held");
    assert!(inbox.try_recv().is_none());
    drop(first);
    assert!(second.await.expect("send"), "room given back on drop");
    assert_eq!(text(inbox.recv().await), Some(big));
}

#[tokio::test]
async fn a_message_larger_than_the_outbox_waits_for_an_empty_outbox_then_goes() {
    let (outbox, mut inbox) = Outbox::with_capacity(100);
    let huge = "y".repeat(10_000);
    assert!(outbox.send(note(&huge)).await);
    assert_eq!(text(inbox.recv().await), Some(huge));
}

#[tokio::test]
async fn a_dropped_inbox_fails_sends_and_frees_waiting_senders_and_queued_rooms() {
    let (outbox, inbox) = Outbox::with_capacity(100);
    let budget = Arc::new(Semaphore::new(10));
    let request = budget.clone().try_acquire_many_owned(10).expect("budget");
    let reply = Message::Reply(Reply::new(b"{}".to_vec(), 200));
    assert!(outbox.send_holding(reply, Some(request)).await);
    assert_eq!(budget.available_permits(), 0, "held by the queued reply");
    let blocked = {
        let outbox = outbox.clone();
        tokio::spawn(async move { outbox.send(note(&"z".repeat(90))).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!blocked.is_finished(), "waits for room");
    assert!(!outbox.is_closed());
    drop(inbox);
    assert!(
        !blocked.await.expect("send"),
        "a waiting sender learns the reader is gone"
    );
    assert!(outbox.is_closed());
    assert!(!outbox.send(note("late")).await);
    assert_eq!(
        budget.available_permits(),
        10,
        "a queued reply's budget is given back when its inbox goes"
    );
}

#[tokio::test]
async fn a_recv_given_up_leaves_the_next_one_in_another_task_to_be_woken() {
    let (outbox, mut inbox) = Outbox::channel();
    let timed_out = tokio::time::timeout(Duration::from_millis(10), inbox.recv()).await;
    assert!(timed_out.is_err());
    // The waker the abandoned recv left is another task's: the next recv
    // must put its own in its place, or the send below wakes nobody.
    let waiting = tokio::spawn(async move { text(inbox.recv().await) });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(outbox.send(note("kept")).await);
    let got = tokio::time::timeout(Duration::from_secs(5), waiting).await;
    assert_eq!(
        got.expect("the waiting recv was woken")
            .expect("recv")
            .as_deref(),
        Some("kept")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_writer_thread_is_woken_by_each_send_and_by_the_end() {
    let (outbox, mut inbox) = Outbox::channel();
    let (done, seen) = std::sync::mpsc::channel();
    // Not joined: a writer never woken fails the test below instead of
    // hanging it.
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        while let Some(text) = text(inbox.blocking_recv()) {
            seen.push(text);
        }
        let _ = done.send(seen);
    });
    for i in 0..200 {
        assert!(outbox.send(note(&i.to_string())).await);
        if i % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    drop(outbox);
    let seen = tokio::task::block_in_place(|| seen.recv_timeout(Duration::from_secs(5)))
        .expect("the writer was woken for every message and for the end");
    let expected: Vec<String> = (0..200).map(|i| i.to_string()).collect();
    assert_eq!(seen, expected);
}
