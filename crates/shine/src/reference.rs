//! What the runs of many artifacts of one definition share at one size set (explore's
//! candidates: every strategy compiles the same definition): the random inputs, made once
//! ([`SharedInputs`]), and the interpreter's reference result on them, computed the first time
//! a result is verified and kept ([`Reference`]). A run made from a reference
//! ([`Executable::with_reference`](crate::Executable::with_reference)) takes its inputs from it,
//! and its verification compares its own result with the kept reference: every artifact is
//! still run and compared, only the program's meaning is computed once.

use crate::boundary::{Array, Output};
use crate::inputs::{random_inputs, random_param_types};
use crate::sum_bound::{self, SumBounds};
use crate::{verify, Error, SourceFile, Stage};
use codegen::gpu::IndexWidth;
use rise::infer::{instantiate_def, prepare_def, Instance};
use rise::DataType;
use runtime::Buffer;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Input arrays made once, and their bytes as the code's buffers (once per index width): the
/// random inputs of one size set, shared by every run at it.
pub struct SharedInputs {
    arrays: Vec<Array>,
    /// The buffers with 32-bit and with 64-bit indices, made the first time a run asks.
    buffers: [OnceLock<Result<Arc<Vec<Buffer>>, String>>; 2],
}

impl SharedInputs {
    /// The random inputs of a definition of type `scheme` at the sizes `nats` from `seed`,
    /// as a run of [`Inputs::Random`](crate::Inputs::Random) makes them.
    pub fn random(
        scheme: &rise::Type,
        nats: &[(String, i64)],
        seed: u64,
    ) -> Result<SharedInputs, Error> {
        Ok(SharedInputs::new(random_inputs(scheme, nats, seed)?))
    }

    /// These arrays, shared.
    pub fn new(arrays: Vec<Array>) -> SharedInputs {
        SharedInputs {
            arrays,
            buffers: Default::default(),
        }
    }

    /// The arrays, in the order of the definition's value parameters.
    pub fn arrays(&self) -> &[Array] {
        &self.arrays
    }

    /// The data types of the arrays.
    pub fn types(&self) -> Vec<DataType> {
        self.arrays.iter().map(Array::data_type).collect()
    }

    /// The arrays as the buffers of code whose indices are `width` wide (made once per width);
    /// `def` names the definition in errors.
    pub(crate) fn buffers(&self, width: IndexWidth, def: &str) -> Result<Arc<Vec<Buffer>>, Error> {
        let slot = match width {
            IndexWidth::Bits32 => &self.buffers[0],
            IndexWidth::Bits64 => &self.buffers[1],
        };
        slot.get_or_init(|| {
            self.arrays
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let bytes = a.to_bytes(width).map_err(|e| {
                        format!("parameter {} of `{def}` (`{}`): {e}", i + 1, a.data_type())
                    })?;
                    Ok(Buffer::from_bytes(&bytes))
                })
                .collect::<Result<Vec<_>, String>>()
                .map(Arc::new)
        })
        .clone()
        .map_err(Error::from)
    }
}

/// The inputs of a definition at one size set and the interpreter's result on them, computed
/// once (the first time a run made from it is verified) and compared with every run's result.
pub struct Reference {
    program: SourceFile,
    def: String,
    nats: Vec<(String, i64)>,
    inputs: Arc<SharedInputs>,
    instance: Instance,
    cc: String,
    expected: OnceLock<Result<Arc<Output>, Error>>,
    bounds: OnceLock<Result<Option<Arc<SumBounds>>, Error>>,
    evaluations: AtomicUsize,
}

impl Reference {
    /// The reference of the definition `def` of `program` at the sizes `nats` on `inputs`
    /// (foreign functions compiled by `cc`): the definition instantiated at the inputs' types,
    /// nothing interpreted yet. Errors of checking are [`Stage::Check`], of the inputs and
    /// sizes [`Stage::Input`].
    pub fn new(
        program: &SourceFile,
        def: &str,
        nats: &[(String, i64)],
        inputs: Arc<SharedInputs>,
        cc: &str,
    ) -> Result<Reference, Error> {
        let checked = program.check().map_err(|e| e.at(Stage::Check))?;
        prepare_def(&checked, def).map_err(|d| program.error(d).at(Stage::Check))?;
        let instance = instantiate_def(&checked, def, &inputs.types(), nats)
            .map_err(|d| program.error(d).at(Stage::Input))?;
        Ok(Reference {
            program: program.clone(),
            def: def.to_string(),
            nats: nats.to_vec(),
            inputs,
            instance,
            cc: cc.to_string(),
            expected: OnceLock::new(),
            bounds: OnceLock::new(),
            evaluations: AtomicUsize::new(0),
        })
    }

    /// The program, the definition and the sizes it is the reference of.
    pub fn of(&self) -> (&SourceFile, &str, &[(String, i64)]) {
        (&self.program, &self.def, &self.nats)
    }

    /// The inputs.
    pub fn inputs(&self) -> &Arc<SharedInputs> {
        &self.inputs
    }

    /// The definition instantiated at the inputs' types and the sizes.
    pub(crate) fn instance(&self) -> &Instance {
        &self.instance
    }

    /// How many times the interpreter ran on this reference's program: its result once
    /// (the first verification), and the two runs of the bound for reassociated sums once
    /// (the first verification the tolerance refuses).
    pub fn evaluations(&self) -> usize {
        self.evaluations.load(Ordering::Relaxed)
    }

    /// The interpreter's result, computed the first time it is asked for (a caller asking
    /// meanwhile waits for it): [`Stage::Verify`]'s error if the interpreter fails.
    pub fn expected(&self) -> Result<Arc<Output>, Error> {
        self.expected
            .get_or_init(|| {
                self.evaluations.fetch_add(1, Ordering::Relaxed);
                verify::interpret(
                    &self.program,
                    &self.instance,
                    self.inputs.arrays(),
                    &self.cc,
                )
                .map(Arc::new)
                .map_err(|e| e.at(Stage::Verify))
            })
            .clone()
    }

    /// The bound for reassociated sums of products of the result (`None`: the program
    /// computes its floats otherwise), computed the first time it is asked for.
    pub(crate) fn bounds(&self) -> Result<Option<Arc<SumBounds>>, Error> {
        self.bounds
            .get_or_init(|| {
                let bounds = sum_bound::sum_bounds(
                    &self.program,
                    &self.instance,
                    self.inputs.arrays(),
                    &self.cc,
                );
                if let Ok(Some(_)) = &bounds {
                    self.evaluations.fetch_add(2, Ordering::Relaxed);
                }
                bounds
                    .map(|b| b.map(Arc::new))
                    .map_err(|e| e.at(Stage::Verify))
            })
            .clone()
    }
}

/// The data types of the inputs [`SharedInputs::random`] makes for a definition of type
/// `scheme` at the sizes `nats` (runs at size sets whose inputs have the same types share
/// them).
pub fn random_input_types(
    scheme: &rise::Type,
    nats: &[(String, i64)],
) -> Result<Vec<DataType>, Error> {
    random_param_types(scheme, nats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, Executable, Inputs, Options, RunOptions, StrategySource, Target};
    use rise::interp::Scalar;

    const PROGRAM: &str = "def scale2d = fun (a: f32) m => \
                           m |> map (fun row => row |> map (fun x => x * a))";

    /// `scale2d` compiled to C with its outer map split in `s` (a candidate of a tuning).
    fn split(s: i64) -> crate::Artifact {
        split_of(&SourceFile::new("scale.rise", PROGRAM), s)
    }

    /// `program`'s `scale2d` compiled as [`split`] does.
    fn split_of(program: &SourceFile, s: i64) -> crate::Artifact {
        let strategy = StrategySource {
            file: SourceFile::new(
                "split.elv",
                format!("def splitRows = DFNF ; splitJoinMap({s}) @ outermost(appliedMap) ;; DFNF ; lowerToC"),
            ),
            apply: "splitRows".into(),
        };
        compile(
            program,
            "scale2d",
            Some(&strategy),
            Target::C,
            &Options::default(),
        )
        .expect("it compiles")
    }

    fn reference(n: i64) -> Arc<Reference> {
        let program = SourceFile::new("scale.rise", PROGRAM);
        let nats = vec![("n".to_string(), n), ("m".to_string(), 3)];
        let scheme = split(1).lowered.scheme;
        let inputs = Arc::new(SharedInputs::random(&scheme, &nats, 5).expect("inputs"));
        Arc::new(Reference::new(&program, "scale2d", &nats, inputs, "gcc").expect("a reference"))
    }

    #[test]
    fn runs_made_from_a_reference_share_its_inputs_and_its_result() {
        let reference = reference(6);
        let options = RunOptions::default();
        let mut results = Vec::new();
        for s in [1, 2, 3, 6] {
            let mut exe = Executable::with_reference(&split(s), &reference, &options, None)
                .expect("it binds");
            assert!(std::ptr::eq(exe.inputs(), reference.inputs().arrays()));
            let result = exe.run().expect("it runs");
            exe.verify(&result).expect("it agrees with the reference");
            results.push(result);
        }
        assert_eq!(reference.evaluations(), 1, "the interpreter ran once");
        // the same as a run on its own random inputs of the same seed
        let alone = crate::verify(
            &split(2),
            Inputs::Random { seed: 5 },
            reference.of().2,
            &options,
        )
        .expect("it verifies alone");
        assert_eq!(results[1], alone);
        assert_eq!(*reference.expected().expect("the result"), alone);
    }

    #[test]
    fn a_wrong_result_is_refused_against_the_reference() {
        let reference = reference(4);
        let exe = Executable::with_reference(&split(2), &reference, &RunOptions::default(), None)
            .expect("it binds");
        let mut wrong = reference.expected().expect("the result").as_ref().clone();
        wrong.parts[0].data[5] = Scalar::F32(17.5);
        let e = exe.verify(&wrong).expect_err("a wrong result");
        assert!(e.to_string().contains("verification failed"), "{e}");
    }

    #[test]
    fn sizes_the_code_does_not_admit_and_another_program_are_errors() {
        let reference = reference(5);
        let e = Executable::with_reference(&split(2), &reference, &RunOptions::default(), None)
            .err()
            .expect("2 does not divide 5");
        assert!(e.to_string().contains("size constraint of"), "{e}");
        let other = SourceFile::new("other.rise", format!("{PROGRAM}\n"));
        let e = Executable::with_reference(
            &split_of(&other, 5),
            &reference,
            &RunOptions::default(),
            None,
        )
        .err()
        .expect("another program");
        assert!(e.to_string().contains("internal error"), "{e}");
    }
}
