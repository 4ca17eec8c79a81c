//! What a search makes once and every candidate shares: the random inputs of each size set
//! (one copy per set of input types: size sets that differ only in a size the inputs do not
//! mention, a tuned number of chunks say, share them) and the interpreter's reference result
//! at each size set (the program's meaning, the same whatever the strategy: computed the
//! first time a candidate is verified there, [`shine::Reference`]). Every candidate is still
//! run and compared with the reference at every set it is verified at.

use crate::tuning::Bindings;
use shine::{Reference, RunOptions, SharedInputs, SourceFile, Stage};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// A value made once by the first caller that asks for it (the others wait for it).
type Once<T> = Arc<OnceLock<Result<Arc<T>, shine::Error>>>;

/// The inputs and references of a search over one definition of one program, by size set.
pub(crate) struct References {
    program: SourceFile,
    def: String,
    seed: u64,
    /// The definition's type scheme (what the random inputs are made from).
    scheme: Option<rise::Type>,
    /// The inputs, by their types (as text).
    inputs: Mutex<BTreeMap<String, Once<SharedInputs>>>,
    /// The references, by size set.
    references: Mutex<BTreeMap<Bindings, Once<Reference>>>,
}

impl References {
    /// The references of `def` of `program` on random inputs of `seed`; `scheme` is the
    /// definition's type scheme (`None`: the program does not check, and every reference is
    /// that error).
    pub fn new(program: &SourceFile, def: &str, seed: u64) -> References {
        let scheme = program
            .check()
            .ok()
            .and_then(|checked| rise::infer::prepare_def(&checked, def).ok())
            .map(|prepared| prepared.scheme);
        References {
            program: program.clone(),
            def: def.to_string(),
            seed,
            scheme,
            inputs: Mutex::default(),
            references: Mutex::default(),
        }
    }

    /// The reference at the sizes `nats` (made now the first time, its inputs shared with
    /// the other sets of the same input types); the error of making its inputs or
    /// instantiating the definition at them, as a run at those sizes would give it.
    pub fn at(&self, nats: &Bindings) -> Result<Arc<Reference>, shine::Error> {
        let slot = once_of(&self.references, nats.clone());
        slot.get_or_init(|| {
            let inputs = self.inputs_at(nats)?;
            let cc = RunOptions::default().cc;
            Reference::new(&self.program, &self.def, nats, inputs, &cc).map(Arc::new)
        })
        .clone()
    }

    /// How many times the interpreter ran on the references so far (once per size set a
    /// candidate was verified at, and twice more where the bound for reassociated sums was
    /// needed), whatever the number of candidates.
    pub fn evaluations(&self) -> usize {
        let references = self
            .references
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        references
            .values()
            .filter_map(|slot| slot.get().and_then(|r| r.as_ref().ok()))
            .map(|r| r.evaluations())
            .sum()
    }

    /// The random inputs at the sizes `nats`, shared by the sets of the same input types.
    fn inputs_at(&self, nats: &Bindings) -> Result<Arc<SharedInputs>, shine::Error> {
        let Some(scheme) = &self.scheme else {
            // the program's own error, as a run gives it
            let checked = self.program.check().map_err(|e| e.at(Stage::Check))?;
            return Err(rise::infer::prepare_def(&checked, &self.def)
                .err()
                .map(|d| self.program.error(d).at(Stage::Check))
                .unwrap_or_else(|| {
                    shine::Error::from("the definition does not check".to_string())
                }));
        };
        let types = shine::random_input_types(scheme, nats).map_err(|e| e.at(Stage::Input))?;
        let key = types
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ; ");
        once_of(&self.inputs, key)
            .get_or_init(|| {
                SharedInputs::random(scheme, nats, self.seed)
                    .map(Arc::new)
                    .map_err(|e| e.at(Stage::Input))
            })
            .clone()
    }
}

/// The slot of `key` in `map`, added empty if missing.
fn once_of<K: Ord, T>(map: &Mutex<BTreeMap<K, Once<T>>>, key: K) -> Once<T> {
    map.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key)
        .or_default()
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                           m |> map (fun row => row |> map (fun x => x * a))";

    fn set(n: i64, m: i64) -> Bindings {
        vec![("n".to_string(), n), ("m".to_string(), m)]
    }

    #[test]
    fn a_size_set_gets_one_reference_and_sets_of_the_same_types_share_inputs() {
        let refs = References::new(&SourceFile::new("s.rise", PROGRAM), "scale2d", 3);
        let a = refs.at(&set(3, 1)).expect("a reference");
        let again = refs.at(&set(3, 1)).expect("a reference");
        assert!(Arc::ptr_eq(&a, &again), "one reference per set");
        let other = refs.at(&set(5, 1)).expect("a reference");
        assert!(
            !Arc::ptr_eq(a.inputs(), other.inputs()),
            "other types, other inputs"
        );
        // the same set with its sizes in another order has the same inputs
        let reordered = refs.at(&vec![("m".to_string(), 1), ("n".to_string(), 3)]);
        assert!(Arc::ptr_eq(
            a.inputs(),
            reordered.expect("a reference").inputs()
        ));
        assert_eq!(
            refs.evaluations(),
            0,
            "nothing interpreted before it is asked for"
        );
        let first = a.expected().expect("the interpreter's result");
        let second = again.expected().expect("the interpreter's result");
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(refs.evaluations(), 1);
    }

    #[test]
    fn a_missing_size_and_a_wrong_definition_are_errors_of_the_run() {
        let refs = References::new(&SourceFile::new("s.rise", PROGRAM), "scale2d", 3);
        let missing = refs
            .at(&vec![("n".to_string(), 4)])
            .err()
            .expect("an error");
        assert!(
            missing.to_string().contains("needs every size"),
            "{missing}"
        );
        let none = References::new(&SourceFile::new("s.rise", PROGRAM), "nothing", 3);
        assert!(none.at(&set(2, 2)).is_err());
    }
}
