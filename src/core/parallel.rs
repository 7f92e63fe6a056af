//! Data-parallel maps through rayon for the engines' fan-out (charts rendered, per-process log
//! files parsed). A pool that cannot start its threads (the machine's thread or mapping limit)
//! is not a panic, as rayon's global pool would make it: the map runs on the calling thread.

use rayon::prelude::*;

/// `f` over `items`, results in the order of `items`: on the rayon pool this thread already
/// runs in (so a caller's `ThreadPool::install` decides the thread count), else on a new pool of
/// all cores, else, when no pool can be started, on this thread.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if rayon::current_thread_index().is_some() {
        return items.par_iter().map(&f).collect();
    }
    match rayon::ThreadPoolBuilder::new().build() {
        Ok(pool) => pool.install(|| items.par_iter().map(&f).collect()),
        Err(_) => items.iter().map(f).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::map;

    #[test]
    fn results_keep_the_order_of_the_items_inside_and_outside_a_pool() {
        let items: Vec<u64> = (0..1000).collect();
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        assert_eq!(map(&items, |x| x * x), want);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let inside = pool.install(|| map(&items, |x| (rayon::current_num_threads(), x * x)));
        assert!(inside.iter().all(|(threads, _)| *threads == 3));
        assert_eq!(inside.into_iter().map(|(_, v)| v).collect::<Vec<_>>(), want);
    }
}
