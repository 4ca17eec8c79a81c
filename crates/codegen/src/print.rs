//! Printing the AST as C or OpenMP C.
//!
//! The two targets differ only in loop pragmas: OpenMP writes
//! `#pragma omp parallel for` before a loop marked [`Pragma::ParallelFor`],
//! plain C writes nothing (and so compiles warning-free without `-fopenmp`).
//! Expressions get the parentheses C precedence needs, plus those a reader
//! (and `gcc -Wparentheses`) expects: mixed `&&`/`||`, shifts, ternaries, and
//! `/` or `%` next to another multiplicative operator.

use crate::ast::{
    BinOp, Decl, Expr, FnKind, For, Function, Pragma, Stmt, Type, TypeDef, UnOp, Unit,
};
use crate::Target;

const INDENT: &str = "  ";

/// Precedence levels of expressions (higher binds tighter).
const P_TERNARY: u8 = 3;
const P_UNARY: u8 = 15;
const P_POSTFIX: u8 = 16;

/// The whole unit as C source text.
pub fn print_unit(unit: &Unit, target: Target) -> String {
    let mut out = String::new();
    for line in unit.header.lines() {
        out.push_str(&format!("// {line}\n"));
    }
    for inc in &unit.includes {
        out.push_str(&format!("#include <{inc}>\n"));
    }
    if !unit.typedefs.is_empty() {
        out.push('\n');
    }
    for td in &unit.typedefs {
        out.push_str(&typedef(td));
    }
    for f in &unit.functions {
        out.push('\n');
        out.push_str(&function(f, target));
    }
    out
}

fn typedef(td: &TypeDef) -> String {
    match td {
        TypeDef::Vector {
            name,
            elem,
            lanes,
            unaligned,
        } => {
            let bytes = elem.bytes() * lanes;
            let attrs = if *unaligned {
                format!("vector_size({bytes}), aligned({}), may_alias", elem.bytes())
            } else {
                format!("vector_size({bytes})")
            };
            format!(
                "typedef {} {name} __attribute__(({attrs}));\n",
                elem.c_name()
            )
        }
        TypeDef::Struct { name, fields } => {
            let mut s = format!("typedef struct {name} {{\n");
            for f in fields {
                s.push_str(&format!("{INDENT}{};\n", declarator(&f.ty, &f.name)));
            }
            s.push_str(&format!("}} {name};\n"));
            s
        }
    }
}

fn function(f: &Function, target: Target) -> String {
    // C and OpenMP have no kernel qualifier: a kernel is a plain function.
    let _ = (f.kind == FnKind::Kernel, target);
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| declarator(&p.ty, &p.name))
        .collect();
    let params = if params.is_empty() {
        "void".to_string()
    } else {
        params.join(", ")
    };
    let mut p = Printer {
        out: String::new(),
        target,
        parallel_depth: 0,
    };
    p.line(0, &format!("{} {}({params}) {{", type_name(&f.ret), f.name));
    p.stmts(&f.body, 1);
    p.line(0, "}");
    p.out
}

/// `T name`, with the pointer star attached to the name (`float *restrict x`).
fn declarator(ty: &Type, name: &str) -> String {
    match ty {
        Type::Pointer {
            to,
            is_const,
            restrict,
            ..
        } => {
            let r = if *restrict { "restrict " } else { "" };
            match (is_const, &**to) {
                // `void *const *buffers`: the pointee is a const pointer
                (true, Type::Pointer { .. }) => format!("{}const *{r}{name}", type_name(to)),
                (true, _) => format!("const {} *{r}{name}", type_name(to)),
                (false, _) => format!("{} *{r}{name}", type_name(to)),
            }
        }
        _ => format!("{} {name}", type_name(ty)),
    }
}

/// The type as written in casts and `sizeof`.
pub fn type_name(ty: &Type) -> String {
    match ty {
        Type::Void => "void".into(),
        Type::Scalar(s) => s.c_name().into(),
        Type::Named(n) => n.clone(),
        Type::Pointer { .. } => declarator(ty, "").trim_end().to_string(),
    }
}

struct Printer {
    out: String,
    target: Target,
    /// How many parallel loops enclose the statement being printed.
    parallel_depth: usize,
}

impl Printer {
    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str(INDENT);
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn stmts(&mut self, stmts: &[Stmt], depth: usize) {
        for s in stmts {
            self.stmt(s, depth);
        }
    }

    fn stmt(&mut self, s: &Stmt, depth: usize) {
        match s {
            Stmt::Comment(text) => {
                for l in text.lines() {
                    self.line(depth, &format!("// {l}"));
                }
            }
            Stmt::Decl(d) => self.line(depth, &decl(d)),
            Stmt::Assign(l, r) => self.line(depth, &format!("{} = {};", expr(l), expr(r))),
            Stmt::Expr(e) => self.line(depth, &format!("{};", expr(e))),
            Stmt::If(c, then, els) => {
                self.line(depth, &format!("if ({}) {{", expr(c)));
                self.stmts(then, depth + 1);
                if els.is_empty() {
                    self.line(depth, "}");
                } else {
                    self.line(depth, "} else {");
                    self.stmts(els, depth + 1);
                    self.line(depth, "}");
                }
            }
            Stmt::For(f) => self.for_loop(f, depth),
            Stmt::Block(b) => {
                self.line(depth, "{");
                self.stmts(b, depth + 1);
                self.line(depth, "}");
            }
            Stmt::Return(None) => self.line(depth, "return;"),
            Stmt::Return(Some(e)) => self.line(depth, &format!("return {};", expr(e))),
        }
    }

    fn for_loop(&mut self, f: &For, depth: usize) {
        let parallel = f.pragma == Some(Pragma::ParallelFor);
        if parallel && self.parallel_depth == 0 && self.target == Target::OpenMP {
            self.line(depth, "#pragma omp parallel for");
        }
        let step = match &f.step {
            Expr::Int(1) => format!("{}++", f.var),
            s => format!("{} += {}", f.var, expr(s)),
        };
        self.line(
            depth,
            &format!(
                "for (int {v} = {}; {v} < {}; {step}) {{",
                expr(&f.start),
                expr(&f.end),
                v = f.var
            ),
        );
        self.parallel_depth += usize::from(parallel);
        self.stmts(&f.body, depth + 1);
        self.parallel_depth -= usize::from(parallel);
        self.line(depth, "}");
    }
}

fn decl(d: &Decl) -> String {
    let mut s = declarator(&d.ty, &d.name);
    if let Some(n) = d.array_len {
        s.push_str(&format!("[{n}]"));
    }
    if let Some(init) = &d.init {
        s.push_str(&format!(" = {}", expr(init)));
    }
    s.push(';');
    s
}

/// An expression at the top level (no surrounding parentheses).
pub fn expr(e: &Expr) -> String {
    doc(e).0
}

/// Printed text and its precedence.
fn doc(e: &Expr) -> (String, u8) {
    match e {
        Expr::Ident(n) => (n.clone(), P_POSTFIX),
        Expr::Int(v) if *v < 0 => (v.to_string(), P_UNARY),
        Expr::Int(v) => (v.to_string(), P_POSTFIX),
        Expr::Float { value, single } => float_literal(*value, *single),
        Expr::Bool(b) => (b.to_string(), P_POSTFIX),
        Expr::Raw(s) => (s.clone(), P_POSTFIX),
        Expr::Index(a, i) => (format!("{}[{}]", operand(a, P_POSTFIX), expr(i)), P_POSTFIX),
        Expr::Member(a, f) => (format!("{}.{f}", operand(a, P_POSTFIX)), P_POSTFIX),
        Expr::Call(f, args) => {
            let args: Vec<String> = args.iter().map(expr).collect();
            (format!("{f}({})", args.join(", ")), P_POSTFIX)
        }
        Expr::SizeOf(t) => (format!("sizeof({})", type_name(t)), P_POSTFIX),
        Expr::Compound(t, items) => {
            let items: Vec<String> = items.iter().map(expr).collect();
            (
                format!("({}){{{}}}", type_name(t), items.join(", ")),
                P_POSTFIX,
            )
        }
        Expr::InitList(items) => {
            let items: Vec<String> = items.iter().map(expr).collect();
            (format!("{{{}}}", items.join(", ")), P_POSTFIX)
        }
        Expr::Unary(op, a) => {
            let sym = match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::Deref => "*",
                UnOp::AddrOf => "&",
            };
            let inner = operand(a, P_UNARY);
            // `- -x` and `--x` differ: keep a space between two minus signs.
            let sep = if sym == "-" && inner.starts_with('-') {
                " "
            } else {
                ""
            };
            (format!("{sym}{sep}{inner}"), P_UNARY)
        }
        Expr::Cast(t, a) => (
            format!("({}){}", type_name(t), operand(a, P_UNARY)),
            P_UNARY,
        ),
        Expr::Ternary(c, a, b) => (
            format!(
                "{} ? {} : {}",
                operand(c, P_TERNARY + 1),
                operand(a, P_TERNARY + 1),
                operand(b, P_TERNARY)
            ),
            P_TERNARY,
        ),
        Expr::Binary(op, a, b) => {
            let p = op.precedence();
            let l = child(a, *op, false);
            let r = child(b, *op, true);
            (format!("{l} {} {r}", op.c_name()), p)
        }
    }
}

/// `e` printed so that it binds at least as tight as `min`.
fn operand(e: &Expr, min: u8) -> String {
    let (s, p) = doc(e);
    if p < min {
        format!("({s})")
    } else {
        s
    }
}

/// An operand of a binary operator: parenthesised when C needs it or a reader would want it.
fn child(e: &Expr, parent: BinOp, right: bool) -> String {
    let (s, p) = doc(e);
    let needs = match e {
        Expr::Binary(op, ..) => binary_child_needs_parens(parent, *op, right),
        _ => p < parent.precedence(),
    };
    if needs {
        format!("({s})")
    } else {
        s
    }
}

fn binary_child_needs_parens(parent: BinOp, child: BinOp, right: bool) -> bool {
    let arith = |o: BinOp| o.precedence() >= 12;
    let cmp = |o: BinOp| (9..=10).contains(&o.precedence());
    let (pp, cp) = (parent.precedence(), child.precedence());
    if arith(parent) && arith(child) {
        if cp != pp {
            return cp < pp;
        }
        // Same level: C groups to the left, and floating-point `a + (b + c)`
        // is not `a + b + c`, so a right operand keeps its parentheses.
        // On the left, `a * b * c` and `a + b - c`, but `(i / 4) * 4`.
        return right || (pp == 13 && !(parent == BinOp::Mul && child == BinOp::Mul));
    }
    if cmp(parent) {
        return !arith(child);
    }
    if parent == BinOp::And || parent == BinOp::Or {
        // `a < b && c < d && e`; `&&` inside `||` gets parentheses
        return !(cmp(child) || child == parent);
    }
    true
}

fn float_literal(v: f64, single: bool) -> (String, u8) {
    let suffix = if single { "f" } else { "" };
    if v.is_nan() {
        let f = if single {
            "__builtin_nanf"
        } else {
            "__builtin_nan"
        };
        return (format!("{f}(\"\")"), P_POSTFIX);
    }
    if v.is_infinite() {
        let f = if single {
            "__builtin_inff()"
        } else {
            "__builtin_inf()"
        };
        let s = if v < 0.0 {
            format!("-{f}")
        } else {
            f.to_string()
        };
        return (s, if v < 0.0 { P_UNARY } else { P_POSTFIX });
    }
    // `{:?}` always writes a `.` or an exponent, and enough digits to round-trip.
    let text = if single {
        format!("{:?}{suffix}", v as f32)
    } else {
        format!("{v:?}")
    };
    let prec = if v.is_sign_negative() {
        P_UNARY
    } else {
        P_POSTFIX
    };
    (text, prec)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Expr {
        Expr::ident(s)
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::binary(op, a, b)
    }

    #[test]
    fn minimal_readable_parentheses() {
        let ij = bin(BinOp::Add, bin(BinOp::Mul, id("i"), Expr::Int(4)), id("j"));
        assert_eq!(expr(&ij), "i * 4 + j");
        let e = bin(BinOp::Mul, bin(BinOp::Add, id("i"), id("j")), Expr::Int(4));
        assert_eq!(expr(&e), "(i + j) * 4");
        let e = bin(BinOp::Sub, id("a"), bin(BinOp::Sub, id("b"), id("c")));
        assert_eq!(expr(&e), "a - (b - c)");
        let e = bin(
            BinOp::Mul,
            bin(BinOp::Div, id("i"), Expr::Int(4)),
            Expr::Int(4),
        );
        assert_eq!(expr(&e), "(i / 4) * 4");
        let e = bin(BinOp::Add, bin(BinOp::Mod, id("i"), Expr::Int(4)), id("k"));
        assert_eq!(expr(&e), "i % 4 + k");
        let c = bin(
            BinOp::And,
            bin(BinOp::Le, Expr::Int(1), id("i")),
            bin(BinOp::Lt, id("i"), bin(BinOp::Add, id("n"), Expr::Int(1))),
        );
        assert_eq!(expr(&c), "1 <= i && i < n + 1");
        let t = Expr::ternary(
            c,
            id("a"),
            Expr::Float {
                value: 0.0,
                single: true,
            },
        );
        assert_eq!(expr(&t), "1 <= i && i < n + 1 ? a : 0.0f");
        let s = bin(BinOp::Add, t, Expr::Int(1));
        assert!(expr(&s).starts_with("(1 <= i"));
        let x = id("x").index(ij).member("fst");
        assert_eq!(expr(&x), "x[i * 4 + j].fst");
        let neg = Expr::unary(UnOp::Neg, Expr::Int(-3));
        assert_eq!(expr(&neg), "- -3");
        let cast = Expr::cast(
            bin(BinOp::Add, id("a"), id("b")),
            Type::Named("float".into()),
        );
        assert_eq!(expr(&cast), "(float)(a + b)");
    }

    #[test]
    fn float_literals_are_valid_c() {
        assert_eq!(float_literal(2.0, true).0, "2.0f");
        assert_eq!(float_literal(0.1, false).0, "0.1");
        assert_eq!(float_literal(1e-7, true).0, "1e-7f");
        assert_eq!(float_literal(f64::INFINITY, true).0, "__builtin_inff()");
    }
}
