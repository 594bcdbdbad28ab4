//! The open connections: how many each address holds and in all, and which are waiting (no whole
//! request yet, or idle between requests), oldest first, to be closed when a newcomer needs room.

use super::Limits;
use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// The registry of open connections, shared by the accept loop and every connection (bounded by
/// what is open: a closed connection and an address with none open leave no entry).
#[derive(Clone, Default)]
pub(super) struct Open(Arc<Mutex<Registry>>);

#[derive(Default)]
struct Registry {
    conns: HashMap<u64, Entry>,
    /// The waiting connections by the stamp of when they began to wait: oldest first.
    waiting: BTreeMap<u64, u64>,
    by_address: HashMap<IpAddr, usize>,
    /// Ids and stamps, drawn in order.
    next: u64,
}

struct Entry {
    ip: IpAddr,
    state: State,
    /// Dropped (with the entry) to close the connection: its task waits on the receiver.
    _close: oneshot::Sender<()>,
}

/// What an open connection is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    /// No whole request's headers yet, or idle between requests, since the stamp given.
    Waiting(u64),
    /// A request handed to the app, its answer not yet all written to the socket.
    Busy,
}

/// Which cap a refused connection met.
#[derive(Debug, PartialEq)]
pub(super) enum Over {
    /// Its address holds its cap already.
    Address,
    /// The budget is full and every connection in it is busy.
    Total,
}

/// One open connection, registered until the last handle on it (the connection's I/O, its
/// service and its answer's body) is dropped.
pub(super) struct Slot {
    open: Open,
    id: u64,
    /// The answer's body is done: the next flush that completes makes the connection waiting.
    answered: AtomicBool,
}

impl Open {
    /// Registers a new connection from `ip`, waiting; where the budget is full, the connection
    /// that has waited longest is closed to make room. The receiver completes when this one is
    /// closed so.
    pub(super) fn take(
        &self,
        ip: IpAddr,
        limits: Limits,
    ) -> Result<(Arc<Slot>, oneshot::Receiver<()>), Over> {
        let mut reg = self.lock();
        let held = reg.by_address.get(&ip).copied().unwrap_or(0);
        if limits.address_cap().is_some_and(|cap| held >= cap) {
            return Err(Over::Address);
        }
        if reg.conns.len() >= limits.total {
            let Some((_, oldest)) = reg.waiting.pop_first() else {
                return Err(Over::Total);
            };
            reg.remove(oldest);
        }
        let id = reg.stamp();
        let (close, closed) = oneshot::channel();
        let state = State::Waiting(id);
        reg.conns.insert(
            id,
            Entry {
                ip,
                state,
                _close: close,
            },
        );
        reg.waiting.insert(id, id);
        *reg.by_address.entry(ip).or_insert(0) += 1;
        let slot = Slot {
            open: self.clone(),
            id,
            answered: AtomicBool::new(false),
        };
        Ok((Arc::new(slot), closed))
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open connections in all and addresses with any open (for tests).
    #[cfg(test)]
    fn counts(&self) -> (usize, usize) {
        let reg = self.lock();
        (reg.conns.len(), reg.by_address.len())
    }
}

impl Registry {
    fn stamp(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    /// Forgets a connection (closing it, if it is still open) and its place in the counts.
    fn remove(&mut self, id: u64) {
        let Some(entry) = self.conns.remove(&id) else {
            return;
        };
        if let Some(since) = entry.state.since() {
            self.waiting.remove(&since);
        }
        if let Some(n) = self.by_address.get_mut(&entry.ip) {
            *n -= 1;
            if *n == 0 {
                self.by_address.remove(&entry.ip);
            }
        }
    }

    /// Moves a connection still open to `state`.
    fn set(&mut self, id: u64, state: State) {
        let Some(entry) = self.conns.get_mut(&id) else {
            return; // closed already to make room
        };
        let was = std::mem::replace(&mut entry.state, state);
        if let Some(since) = was.since() {
            self.waiting.remove(&since);
        }
        if let Some(since) = state.since() {
            self.waiting.insert(since, id);
        }
    }
}

impl State {
    /// When a waiting connection began to wait.
    fn since(self) -> Option<u64> {
        match self {
            State::Waiting(since) => Some(since),
            State::Busy => None,
        }
    }
}

impl Slot {
    /// A request's headers are in and it goes to the app: never closed to make room.
    pub(super) fn busy(&self) {
        self.answered.store(false, Ordering::Relaxed);
        self.open.lock().set(self.id, State::Busy);
    }

    /// The answer's body is done (or dropped); some of it may wait in hyper's buffer.
    pub(super) fn answered(&self) {
        self.answered.store(true, Ordering::Relaxed);
    }

    /// Everything hyper had buffered is written: after an answer, the connection waits again,
    /// from now.
    pub(super) fn flushed(&self) {
        if self.answered.load(Ordering::Relaxed) && self.answered.swap(false, Ordering::Relaxed) {
            let mut reg = self.open.lock();
            let since = reg.stamp();
            reg.set(self.id, State::Waiting(since));
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.lock().remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::{Open, Over, Slot};
    use crate::listen::Limits;
    use std::net::IpAddr;
    use std::sync::Arc;
    use std::time::Duration;
    use tokio::sync::oneshot::{self, error::TryRecvError};

    fn limits(per_address: Option<usize>, total: usize) -> Limits {
        Limits {
            header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(1),
            per_address,
            total,
        }
    }

    fn ip(i: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, i])
    }

    type Held = (Arc<Slot>, oneshot::Receiver<()>);

    fn closed(held: &mut Held) -> bool {
        held.1.try_recv() == Err(TryRecvError::Closed)
    }

    #[test]
    fn an_address_holds_at_most_its_cap_and_a_closed_connection_frees_its_slot() {
        let open = Open::default();
        let cap = limits(Some(3), 100);
        let held: Vec<_> = (0..3).map(|_| open.take(ip(1), cap).unwrap()).collect();
        assert_eq!(open.take(ip(1), cap).err(), Some(Over::Address));
        let other = open.take(ip(2), cap);
        assert!(other.is_ok(), "another address is not affected");
        drop(held);
        assert!(open.take(ip(1), cap).is_ok());
        drop(other);
        // Nothing open leaves no entry behind (the maps stay bounded).
        assert_eq!(open.counts(), (0, 0));
        assert!(open.lock().waiting.is_empty());
        assert!(open.take(ip(1), limits(None, 100)).is_ok());
    }

    #[test]
    fn a_full_budget_closes_the_connection_that_has_waited_longest() {
        let open = Open::default();
        let cap = limits(None, 3);
        let mut a = open.take(ip(1), cap).unwrap();
        let mut b = open.take(ip(2), cap).unwrap();
        let mut c = open.take(ip(3), cap).unwrap();
        b.0.busy();
        let mut d = open.take(ip(4), cap).unwrap();
        assert!(closed(&mut a), "the oldest waiting one made room");
        assert!(!closed(&mut b) && !closed(&mut c));
        let mut e = open.take(ip(5), cap).unwrap();
        assert!(closed(&mut c), "the busy one is passed over");
        assert!(!closed(&mut b) && !closed(&mut d));
        // b answers and goes idle: it waits from now, after d and e.
        b.0.answered();
        b.0.flushed();
        let _f = open.take(ip(6), cap).unwrap();
        assert!(closed(&mut d));
        let _g = open.take(ip(7), cap).unwrap();
        assert!(closed(&mut e));
        assert!(!closed(&mut b));
        assert_eq!(open.counts(), (3, 3), "closed ones are counted no more");
        drop((a, c, d, e));
        assert_eq!(
            open.counts(),
            (3, 3),
            "their handles going later changes nothing"
        );
    }

    #[test]
    fn a_newcomer_is_refused_only_when_every_connection_is_busy() {
        let open = Open::default();
        let cap = limits(None, 2);
        let mut a = open.take(ip(1), cap).unwrap();
        let mut b = open.take(ip(2), cap).unwrap();
        a.0.busy();
        b.0.busy();
        assert_eq!(open.take(ip(3), cap).err(), Some(Over::Total));
        // An answer whose body is done but still in hyper's buffer is busy yet.
        a.0.answered();
        assert_eq!(open.take(ip(3), cap).err(), Some(Over::Total));
        // A flush before the body was done changes nothing.
        b.0.flushed();
        assert_eq!(open.take(ip(3), cap).err(), Some(Over::Total));
        assert!(!closed(&mut a) && !closed(&mut b));
        a.0.flushed();
        assert!(open.take(ip(3), cap).is_ok());
        assert!(closed(&mut a) && !closed(&mut b));
    }

    #[test]
    fn a_new_request_on_an_answered_connection_is_busy_whatever_flushes_follow() {
        let open = Open::default();
        let cap = limits(None, 1);
        let mut a = open.take(ip(1), cap).unwrap();
        a.0.busy();
        a.0.answered();
        a.0.busy(); // the next request came before the flush
        a.0.flushed();
        assert_eq!(open.take(ip(2), cap).err(), Some(Over::Total));
        assert!(!closed(&mut a));
    }

    #[test]
    fn connections_in_all_stay_within_the_budget_whatever_their_addresses() {
        let open = Open::default();
        let cap = limits(Some(2), 5);
        let held: Vec<_> = (1..=5).map(|i| open.take(ip(i), cap).unwrap()).collect();
        for h in &held {
            h.0.busy();
        }
        assert_eq!(open.take(ip(6), cap).err(), Some(Over::Total));
        drop(held);
        assert!(open.take(ip(6), cap).is_ok());
    }
}
