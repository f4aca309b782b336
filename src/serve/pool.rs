//! The compile workers: a fixed number of threads (the cores) taking jobs from a bounded
//! queue; a job that finds the queue full is refused (the caller answers 503).

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

pub type Job = Box<dyn FnOnce() + Send + 'static>;

pub struct Pool {
    tx: Mutex<Option<SyncSender<Job>>>,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    pub workers: usize,
    pub queue: usize,
}

impl Pool {
    /// `workers` threads, `queue` jobs waiting at most.
    pub fn new(workers: usize, queue: usize) -> std::io::Result<Pool> {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        let mut threads = Vec::new();
        for i in 0..workers.max(1) {
            let rx: Arc<Mutex<Receiver<Job>>> = rx.clone();
            threads.push(
                std::thread::Builder::new()
                    .name(format!("compile-{i}"))
                    // The evaluator recurses over the tree: as much stack as the command's thread.
                    .stack_size(crate::COMPILE_STACK)
                    .spawn(move || {
                        crate::stack::mark(crate::COMPILE_STACK);
                        loop {
                            let job = {
                                let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
                                rx.recv()
                            };
                            match job {
                                Ok(job) => job(),
                                Err(_) => return,
                            }
                        }
                    })?,
            );
        }
        Ok(Pool {
            tx: Mutex::new(Some(tx)),
            threads: Mutex::new(threads),
            workers: workers.max(1),
            queue,
        })
    }

    /// Queues a job; `false` when the queue is full (or the pool stopped).
    pub fn submit(&self, job: Job) -> bool {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        match tx.as_ref().map(|t| t.try_send(job)) {
            Some(Ok(())) => true,
            Some(Err(TrySendError::Full(_) | TrySendError::Disconnected(_))) | None => false,
        }
    }

    /// Lets the queued jobs finish, then stops the threads.
    pub fn stop(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        let threads = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in threads {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_queue_refuses() {
        let pool = Pool::new(1, 1).unwrap();
        let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        assert!(pool.submit(Box::new(move || {
            let _ = started_tx.send(());
            let _ = hold_rx.recv();
        })));
        started_rx.recv().unwrap();
        // The worker is busy: one job waits, the next is refused.
        assert!(pool.submit(Box::new(|| {})));
        assert!(!pool.submit(Box::new(|| {})));
        hold_tx.send(()).unwrap();
        pool.stop();
    }
}
