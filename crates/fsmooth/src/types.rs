//! F-smooth types (Shaikhha et al., ICFP 2019, Fig. 2): numbers, booleans,
//! arrays, pairs and functions. `Card` (array sizes) is written but is the same
//! type as `Index`; `Vector` is `Array<Double>` and `Matrix` is `Array<Vector>`.

use std::fmt;

/// An F-smooth type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// Floating-point numbers (the differentiable scalars).
    Double,
    /// Integers used as indices and sizes (`Card` is the same type).
    Index,
    /// Booleans.
    Bool,
    /// `Array<T>`.
    Array(Box<Type>),
    /// `(T, U)`.
    Pair(Box<Type>, Box<Type>),
    /// `T => U`.
    Fun(Box<Type>, Box<Type>),
}

impl Type {
    /// `Array<t>`
    pub fn array(t: Type) -> Type {
        Type::Array(Box::new(t))
    }
    /// `(a, b)`
    pub fn pair(a: Type, b: Type) -> Type {
        Type::Pair(Box::new(a), Box::new(b))
    }
    /// `a => b`
    pub fn fun(a: Type, b: Type) -> Type {
        Type::Fun(Box::new(a), Box::new(b))
    }
    /// `Vector = Array<Double>`
    pub fn vector() -> Type {
        Type::array(Type::Double)
    }
    /// `Matrix = Array<Array<Double>>`
    pub fn matrix() -> Type {
        Type::array(Type::vector())
    }

    /// The type of the differentiated term, `D⟦T⟧` (forward mode with dual
    /// numbers as pairs): `D⟦Double⟧ = (Double, Double)`; `Index` and `Bool`
    /// carry no tangent; arrays, pairs and functions are differentiated
    /// component-wise.
    pub fn dual(&self) -> Type {
        match self {
            Type::Double => Type::pair(Type::Double, Type::Double),
            Type::Index | Type::Bool => self.clone(),
            Type::Array(t) => Type::array(t.dual()),
            Type::Pair(a, b) => Type::pair(a.dual(), b.dual()),
            Type::Fun(a, b) => Type::fun(a.dual(), b.dual()),
        }
    }

    /// Whether values of this type contain no functions.
    pub fn is_first_order(&self) -> bool {
        match self {
            Type::Double | Type::Index | Type::Bool => true,
            Type::Array(t) => t.is_first_order(),
            Type::Pair(a, b) => a.is_first_order() && b.is_first_order(),
            Type::Fun(..) => false,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Double => write!(f, "Double"),
            Type::Index => write!(f, "Index"),
            Type::Bool => write!(f, "Bool"),
            Type::Array(t) if **t == Type::Double => write!(f, "Vector"),
            Type::Array(t) if **t == Type::vector() => write!(f, "Matrix"),
            Type::Array(t) => write!(f, "Array<{t}>"),
            Type::Pair(a, b) => write!(f, "({a}, {b})"),
            Type::Fun(a, b) => {
                if matches!(**a, Type::Fun(..)) {
                    write!(f, "({a}) => {b}")
                } else {
                    write!(f, "{a} => {b}")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_aliases_and_arrows() {
        assert_eq!(Type::matrix().to_string(), "Matrix");
        assert_eq!(
            Type::fun(Type::fun(Type::Index, Type::Double), Type::vector()).to_string(),
            "(Index => Double) => Vector"
        );
        assert_eq!(Type::vector().dual().to_string(), "Array<(Double, Double)>");
    }
}
