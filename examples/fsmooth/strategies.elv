// F-smooth strategies in the .elv strategy language, the one RISE strategies
// are written in (`shine fsmooth rules` lists the rules, named strategies,
// traversals and combinators they can use). Apply one with
//   shine fsmooth simplify transpose_twice.fsmooth --strategy strategies.elv --apply figure5_13
// or an expression over them, `--apply "unroll(2) ; tidy"`.

// Thesis Figure 5.13 from its parts: inline a `let` or a β-redex, then fuse
// the array built with its uses; 12 rule applications, as `fig5_13`.
def inline = letPartialEval <+ letApp <+ funToLet
def figure5_13 = normalize(buildGet <+ lenBuild <+ inline)

// Peel the first n iterations off the outermost loop with a literal count,
// then clean up what that leaves: `unroll(3) ; tidy` removes the loop of
// `ifold (fun s i -> s + x) 0.0 3`.
def unroll(n) = repeatN(n, foldUnroll @ outermost(is(ifold)))
def tidy = normalize(fusion <+ tuples <+ lets <+ loops <+ algebra)

// Simplify only the generators of builds (the element of each position),
// leaving sizes, loops and everything else as written.
def generators = try(normalize(fusion <+ tuples <+ lets <+ algebra) @ child(generator)) @ tryAll
