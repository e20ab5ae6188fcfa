//! The service's background work (a write's sentence vectors) on the tokio runtime: tracked
//! so shutdown waits for it, counted so a caller can wait for what is in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use retold_domain::{Background, BackgroundTask};
use tokio::sync::Notify;
use tokio_util::task::TaskTracker;

#[derive(Debug, Default)]
struct InFlight {
    count: AtomicUsize,
    idle: Notify,
    /// Callers waiting in `settled`, and their arrival, which ends every gathering at once.
    waiting: AtomicUsize,
    arrived: Notify,
}

/// Ends one caller's wait when dropped, also when the caller stops waiting early.
struct Waiting(Arc<InFlight>);

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Ends one task's count when dropped, also when the task panics.
struct Finished(Arc<InFlight>);

impl Drop for Finished {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Background tasks on the current tokio runtime.
#[derive(Debug, Clone, Default)]
pub struct BackgroundTasks {
    tracker: TaskTracker,
    in_flight: Arc<InFlight>,
}

impl BackgroundTasks {
    /// Tasks tracked by `tracker` (which shutdown closes and waits for).
    pub fn new(tracker: TaskTracker) -> Self {
        Self { tracker, in_flight: Arc::default() }
    }
}

impl Background for BackgroundTasks {
    fn spawn(&self, task: BackgroundTask) {
        self.in_flight.count.fetch_add(1, Ordering::SeqCst);
        let finished = Finished(self.in_flight.clone());
        self.tracker.spawn(async move {
            let _finished = finished;
            task.await;
        });
    }

    /// Completes once no task is in flight.
    fn settled(&self) -> BackgroundTask {
        let in_flight = self.in_flight.clone();
        Box::pin(async move {
            in_flight.waiting.fetch_add(1, Ordering::SeqCst);
            let _waiting = Waiting(in_flight.clone());
            in_flight.arrived.notify_waiters();
            loop {
                // Made before the count is read, so a task ending in between still wakes it.
                let idle = in_flight.idle.notified();
                if in_flight.count.load(Ordering::SeqCst) == 0 {
                    return;
                }
                idle.await;
            }
        })
    }

    /// A sleep of `delay` that a caller arriving in `settled` (or already there) cuts short.
    fn gather(&self, delay: Duration) -> BackgroundTask {
        let in_flight = self.in_flight.clone();
        Box::pin(async move {
            let arrived = in_flight.arrived.notified();
            tokio::pin!(arrived);
            // Registered before the count is read, so a caller arriving in between still ends it.
            arrived.as_mut().enable();
            if in_flight.waiting.load(Ordering::SeqCst) > 0 {
                return;
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = arrived => {}
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn settled_waits_for_every_task_in_flight_even_one_that_panics() {
        let tasks = BackgroundTasks::default();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let done = Arc::new(AtomicUsize::new(0));
        let seen = done.clone();
        tasks.spawn(Box::pin(async move {
            let _ = rx.await;
            seen.fetch_add(1, Ordering::SeqCst);
        }));
        tasks.spawn(Box::pin(async { panic!("a failing task still ends its count") }));
        let settled = tokio::spawn(tasks.settled());
        tokio::task::yield_now().await;
        assert!(!settled.is_finished(), "one task is still waiting");
        tx.send(()).unwrap();
        settled.await.unwrap();
        assert_eq!(done.load(Ordering::SeqCst), 1);
        // Nothing in flight: settled at once.
        tasks.settled().await;
    }

    /// A task gathering work for an hour keeps nobody waiting: a caller arriving in
    /// `settled` ends its gathering, and a gathering begun while a caller waits ends at once.
    #[tokio::test]
    async fn a_caller_in_settled_ends_every_gathering() {
        let tasks = BackgroundTasks::default();
        let hour = Duration::from_secs(3600);
        let done = Arc::new(AtomicUsize::new(0));
        let (seen, gather) = (done.clone(), tasks.gather(hour));
        tasks.spawn(Box::pin(async move {
            gather.await;
            seen.fetch_add(1, Ordering::SeqCst);
        }));
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(done.load(Ordering::SeqCst), 0, "still gathering");
        // A guard against a hang, not a timing: the gathering is an hour.
        let settled = tokio::time::timeout(Duration::from_secs(60), tasks.settled()).await;
        assert!(settled.is_ok(), "settled waited out the gathering");
        assert_eq!(done.load(Ordering::SeqCst), 1);

        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tasks.spawn(Box::pin(async move {
            let _ = rx.await;
        }));
        let settled = tokio::spawn(tasks.settled());
        while tasks.in_flight.waiting.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        let late = tokio::time::timeout(Duration::from_secs(60), tasks.gather(hour)).await;
        assert!(late.is_ok(), "a gathering begun while a caller waits ends at once");
        tx.send(()).unwrap();
        settled.await.unwrap();
        assert_eq!(tasks.in_flight.waiting.load(Ordering::SeqCst), 0, "the caller is gone");
    }
}
