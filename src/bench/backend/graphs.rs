//! Graph capture for backends that replay their own work items (host, MPI): between
//! `begin_capture` and `end_capture` items are recorded instead of run; a graph is its list of
//! items, replayed in order by `launch_graph`. Ids are never reused; a destroyed graph is gone.

use super::GraphId;
use crate::core::error::Error;

/// The capture in progress and the recorded graphs of one backend.
#[derive(Debug)]
pub struct Graphs<T> {
    /// Backend name for messages (`host`, `mpi`).
    backend: &'static str,
    /// Items recorded since `begin`, when capturing.
    capture: Option<Vec<T>>,
    /// Recorded graphs by id; `None` once destroyed.
    graphs: Vec<Option<Vec<T>>>,
}

impl<T: Clone> Graphs<T> {
    /// No capture, no graph.
    pub fn new(backend: &'static str) -> Self {
        Graphs {
            backend,
            capture: None,
            graphs: Vec::new(),
        }
    }

    /// Whether a capture is open.
    pub fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// Records `item` when a capture is open (`None` back), else gives it back to be run.
    pub fn record(&mut self, item: T) -> Option<T> {
        match &mut self.capture {
            Some(graph) => {
                graph.push(item);
                None
            }
            None => Some(item),
        }
    }

    /// Opens a capture; one at a time.
    pub fn begin(&mut self) -> Result<(), Error> {
        if self.capture.is_some() {
            return Err(Error::Backend(format!(
                "{} backend: already capturing",
                self.backend
            )));
        }
        self.capture = Some(Vec::new());
        Ok(())
    }

    /// Closes the capture into a new graph.
    pub fn end(&mut self) -> Result<GraphId, Error> {
        let graph = self.capture.take().ok_or_else(|| {
            Error::Backend(format!(
                "{} backend: end_capture without capture",
                self.backend
            ))
        })?;
        self.graphs.push(Some(graph));
        Ok(GraphId(self.graphs.len() - 1))
    }

    /// A graph's items, to replay.
    pub fn items(&self, graph: GraphId) -> Result<Vec<T>, Error> {
        self.graphs.get(graph.0).cloned().flatten().ok_or_else(|| {
            Error::Backend(format!("{} backend: no graph {}", self.backend, graph.0))
        })
    }

    /// Destroys every graph (their ids stay taken).
    pub fn destroy(&mut self) {
        self.graphs.iter_mut().for_each(|g| *g = None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_recorded_only_while_capturing_and_replayed_in_order() {
        let mut g = Graphs::new("host");
        assert_eq!(g.record(1), Some(1));
        g.begin().unwrap();
        assert!(g.begin().is_err(), "one capture at a time");
        assert_eq!((g.record(2), g.record(3)), (None, None));
        let id = g.end().unwrap();
        assert!(!g.capturing() && g.end().is_err());
        assert_eq!(g.items(id).unwrap(), vec![2, 3]);
        g.begin().unwrap();
        let empty = g.end().unwrap();
        assert_ne!(empty, id, "ids are not reused");
        g.destroy();
        let e = g.items(id).unwrap_err().to_string();
        assert_eq!(e, "host backend: no graph 0");
    }
}
