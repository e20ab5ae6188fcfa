//! The service's background work (a write's sentence vectors) on the tokio runtime: tracked
//! so shutdown waits for it, counted so a caller can wait for what is in flight.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use retold_domain::{Background, BackgroundTask};
use tokio::sync::Notify;
use tokio_util::task::TaskTracker;

#[derive(Debug, Default)]
struct InFlight {
    count: AtomicUsize,
    idle: Notify,
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
}
