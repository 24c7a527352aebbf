//! The row cache's LRU: one doubly linked list of every cached entry of every table, kept in
//! a slab (nodes are indices, so entries hold a plain `usize` handle and nothing is boxed).
//!
//! Invariant: a handle stays valid until [`Lru::remove`] or [`Lru::pop_oldest`] returns its
//! item; freed slots are reused. Every operation is O(1).

/// No node.
const NIL: usize = usize::MAX;

struct Node<T> {
    prev: usize,
    next: usize,
    item: Option<T>,
}

/// Least recently used first, most recently used last.
pub struct Lru<T> {
    nodes: Vec<Node<T>>,
    free: Vec<usize>,
    /// Oldest.
    head: usize,
    /// Newest.
    tail: usize,
    len: usize,
}

impl<T> Default for Lru<T> {
    fn default() -> Self {
        Lru {
            nodes: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl<T> Lru<T> {
    /// Items held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds an item as the most recently used; returns its handle.
    pub fn push(&mut self, item: T) -> usize {
        let node = Node {
            prev: NIL,
            next: NIL,
            item: Some(item),
        };
        let h = match self.free.pop() {
            Some(h) => {
                if let Some(slot) = self.nodes.get_mut(h) {
                    *slot = node;
                }
                h
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        };
        self.link_last(h);
        self.len += 1;
        h
    }

    /// Marks an item as the most recently used.
    pub fn touch(&mut self, h: usize) {
        if self.tail != h && self.live(h) {
            self.unlink(h);
            self.link_last(h);
        }
    }

    /// Removes an item by handle.
    pub fn remove(&mut self, h: usize) -> Option<T> {
        if !self.live(h) {
            return None;
        }
        self.unlink(h);
        self.len -= 1;
        self.free.push(h);
        self.nodes.get_mut(h).and_then(|n| n.item.take())
    }

    /// Removes the least recently used item.
    pub fn pop_oldest(&mut self) -> Option<T> {
        let h = self.head;
        self.remove(h)
    }

    fn live(&self, h: usize) -> bool {
        self.nodes.get(h).is_some_and(|n| n.item.is_some())
    }

    fn set_prev(&mut self, h: usize, prev: usize) {
        if let Some(n) = self.nodes.get_mut(h) {
            n.prev = prev;
        }
    }

    fn set_next(&mut self, h: usize, next: usize) {
        if let Some(n) = self.nodes.get_mut(h) {
            n.next = next;
        }
    }

    fn unlink(&mut self, h: usize) {
        let (prev, next) = self.nodes.get(h).map_or((NIL, NIL), |n| (n.prev, n.next));
        if prev == NIL {
            self.head = next;
        } else {
            self.set_next(prev, next);
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.set_prev(next, prev);
        }
        self.set_prev(h, NIL);
        self.set_next(h, NIL);
    }

    fn link_last(&mut self, h: usize) {
        let tail = self.tail;
        self.set_prev(h, tail);
        self.set_next(h, NIL);
        if tail == NIL {
            self.head = h;
        } else {
            self.set_next(tail, h);
        }
        self.tail = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_first() {
        let mut lru = Lru::default();
        let a = lru.push('a');
        let b = lru.push('b');
        let _c = lru.push('c');
        lru.touch(a);
        assert_eq!(lru.remove(b), Some('b'));
        assert_eq!(lru.remove(b), None);
        let d = lru.push('d');
        assert_eq!(d, b, "the freed slot is reused");
        assert_eq!(lru.len(), 3);
        assert_eq!(lru.pop_oldest(), Some('c'));
        assert_eq!(lru.pop_oldest(), Some('a'));
        assert_eq!(lru.pop_oldest(), Some('d'));
        assert_eq!(lru.pop_oldest(), None);
        assert!(lru.is_empty());
    }
}
