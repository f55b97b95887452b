//! A bounded queue that drops the oldest item when full.

use std::collections::VecDeque;

/// Anything that can report its size in bytes.
pub trait Sized2 {
    fn size(&self) -> usize;
}

/// A queue holding at most `capacity` items.
pub struct BoundedQueue<T> {
    items: VecDeque<T>,
    capacity: usize,
}

/// What `push` did with the queue.
pub enum Pushed {
    Stored,
    DroppedOldest,
}

impl<T> BoundedQueue<T> {
    /// An empty queue for `capacity` items.
    pub fn new(capacity: usize) -> Self {
        Self { items: VecDeque::with_capacity(capacity), capacity }
    }

    /// Adds an item, dropping the oldest one when the queue is full.
    pub fn push(&mut self, item: T) -> Pushed {
        if self.items.len() == self.capacity {
            self.items.pop_front();
            self.items.push_back(item);
            return Pushed::DroppedOldest;
        }
        self.items.push_back(item);
        Pushed::Stored
    }
}

fn main() {
    let mut queue = BoundedQueue::new(2);
    queue.push(1);
}
