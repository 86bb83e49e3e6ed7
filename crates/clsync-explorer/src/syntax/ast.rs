//! The parsed form of a litmus test, shared by every syntax the parser reads.
//!
//! Names are still names here: [`crate::enumerate`] resolves them to
//! locations and registers when it lowers a thread.

use std::fmt;

use serde::Serialize;

/// A position in a litmus file, for error messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The memory a location lives in, as a thread's parameter declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Space {
    /// `global`: every work-item of the device.
    Global,
    /// `local`: one work-group's memory.
    Local,
    /// No qualifier: OpenCL's generic address space. The model of
    /// `opencl.cat` orders neither global nor local memory for it, so it is
    /// only synchronized through atomics of inclusive scope, never through
    /// happens-before.
    Generic,
}

/// `memory_order` and `memory_scope`: the runtime's own vocabulary
/// (`clsync::sync`), so a test's orders and scopes are the values the
/// runtime takes.
pub use clsync::sync::{MemOrder as Order, MemScope as Scope};

/// Parses an OpenCL C order name.
pub fn order_from_name(s: &str) -> Option<Order> {
    Some(match s {
        "memory_order_relaxed" => Order::Relaxed,
        "memory_order_acquire" => Order::Acquire,
        "memory_order_release" => Order::Release,
        "memory_order_acq_rel" => Order::AcqRel,
        "memory_order_seq_cst" => Order::SeqCst,
        _ => return None,
    })
}

/// Parses an OpenCL C scope name (`memory_scope_all_devices`, OpenCL 3.0's
/// spelling, is the same scope as `memory_scope_all_svm_devices`).
pub fn scope_from_name(s: &str) -> Option<Scope> {
    Some(match s {
        "memory_scope_work_item" => Scope::WorkItem,
        "memory_scope_sub_group" => Scope::SubGroup,
        "memory_scope_work_group" => Scope::WorkGroup,
        "memory_scope_device" => Scope::Device,
        "memory_scope_all_svm_devices" | "memory_scope_all_devices" => Scope::AllSvmDevices,
        _ => return None,
    })
}

/// Fence flags: bit 1 LOCAL, 2 GLOBAL, 4 IMAGE (as in OpenCL's headers).
pub type FenceFlags = u8;
/// `CLK_LOCAL_MEM_FENCE`.
pub const FLAG_LOCAL: FenceFlags = 1;
/// `CLK_GLOBAL_MEM_FENCE`.
pub const FLAG_GLOBAL: FenceFlags = 2;
/// `CLK_IMAGE_MEM_FENCE`.
pub const FLAG_IMAGE: FenceFlags = 4;

/// How a load or store touches memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A plain access: `*x`, `*x = v`.
    Plain,
    /// An atomic access with its order and scope (defaults filled in:
    /// seq_cst, device).
    Atomic(Order, Scope),
}

/// The read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RmwOp {
    /// `atomic_fetch_add`.
    Add,
    /// `atomic_fetch_sub`.
    Sub,
    /// `atomic_fetch_or`.
    Or,
    /// `atomic_fetch_xor`.
    Xor,
    /// `atomic_fetch_and`.
    And,
    /// `atomic_fetch_min`.
    Min,
    /// `atomic_fetch_max`.
    Max,
    /// `atomic_exchange`: the new value is the operand.
    Exchange,
}

impl RmwOp {
    /// The value stored, given the old value and the operand.
    pub fn apply(self, old: i64, operand: i64) -> i64 {
        match self {
            RmwOp::Add => old.wrapping_add(operand),
            RmwOp::Sub => old.wrapping_sub(operand),
            RmwOp::Or => old | operand,
            RmwOp::Xor => old ^ operand,
            RmwOp::And => old & operand,
            RmwOp::Min => old.min(operand),
            RmwOp::Max => old.max(operand),
            RmwOp::Exchange => operand,
        }
    }
}

/// Binary operators of expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (a division by zero gives 0, as SMT-based tools do)
    Div,
    /// `%`
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl BinOp {
    /// Evaluates the operator on two values (booleans are 0 and 1).
    pub fn apply(self, a: i64, b: i64) -> i64 {
        match self {
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => a.checked_div(b).unwrap_or(0),
            BinOp::Rem => a.checked_rem(b).unwrap_or(0),
            BinOp::BitAnd => a & b,
            BinOp::BitOr => a | b,
            BinOp::BitXor => a ^ b,
            BinOp::And => ((a != 0) && (b != 0)) as i64,
            BinOp::Or => ((a != 0) || (b != 0)) as i64,
            BinOp::Eq => (a == b) as i64,
            BinOp::Ne => (a != b) as i64,
            BinOp::Lt => (a < b) as i64,
            BinOp::Le => (a <= b) as i64,
            BinOp::Gt => (a > b) as i64,
            BinOp::Ge => (a >= b) as i64,
        }
    }
}

/// Unary operators of expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `!`
    Not,
    /// `~`
    BitNot,
}

impl UnOp {
    /// Evaluates the operator.
    pub fn apply(self, v: i64) -> i64 {
        match self {
            UnOp::Neg => v.wrapping_neg(),
            UnOp::Not => (v == 0) as i64,
            UnOp::BitNot => !v,
        }
    }
}

/// A pointer argument: a parameter, maybe plus an offset in elements
/// (`y + r0`, `&y[1]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Ptr {
    /// The parameter.
    pub name: String,
    /// The offset, if any.
    pub offset: Option<Box<Expr>>,
}

impl Ptr {
    /// A pointer to the parameter itself.
    pub fn to(name: impl Into<String>) -> Ptr {
        Ptr {
            name: name.into(),
            offset: None,
        }
    }
}

/// An expression; evaluating it may read memory.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// A register, or a parameter's name (its address).
    Name(String, Span),
    /// A load: `*x`, `atomic_load(x)`, `atomic_load_explicit(x, o[, s])`.
    Load {
        /// The location.
        ptr: Ptr,
        /// Plain or atomic.
        access: Access,
        /// Where.
        span: Span,
    },
    /// `atomic_fetch_<op>[_explicit](x, v[, o[, s]])`, `atomic_exchange…`:
    /// returns the old value.
    Rmw {
        /// The operation.
        op: RmwOp,
        /// The location.
        ptr: Ptr,
        /// The operand.
        operand: Box<Expr>,
        /// Order.
        order: Order,
        /// Scope.
        scope: Scope,
        /// Where.
        span: Span,
    },
    /// `atomic_compare_exchange_{strong,weak}[_explicit](x, e, d[, s, f[, sc]])`:
    /// returns 1 on success, 0 on failure (then `*e` gets the value seen).
    Cas {
        /// The atomic location.
        ptr: Ptr,
        /// The location holding the expected value.
        expected: Ptr,
        /// The value stored on success.
        desired: Box<Expr>,
        /// The success order (the failure order is checked, then, as in
        /// the model's reference tool, the success order tags both events).
        order: Order,
        /// Scope.
        scope: Scope,
        /// Where.
        span: Span,
    },
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

/// A statement of a thread.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `int r;` or `int r = e;`
    Decl {
        /// The register.
        reg: String,
        /// Its initial value, if any (else 0).
        init: Option<Expr>,
        /// Where.
        span: Span,
    },
    /// `r = e;`
    Assign {
        /// The register.
        reg: String,
        /// The value.
        value: Expr,
        /// Where.
        span: Span,
    },
    /// `*x = e;`, `atomic_store[_explicit](x, e[, o[, s]]);`
    Store {
        /// The location.
        ptr: Ptr,
        /// The value.
        value: Expr,
        /// Plain or atomic.
        access: Access,
        /// Where.
        span: Span,
    },
    /// `atomic_work_item_fence(flags, order, scope);` (herd: `fence`).
    Fence {
        /// Flags.
        flags: FenceFlags,
        /// Order.
        order: Order,
        /// Scope, if given.
        scope: Option<Scope>,
        /// Where.
        span: Span,
    },
    /// `L: barrier(flags);`, `work_group_barrier(flags[, scope]);`. The label
    /// names the barrier: equal labels are the same barrier.
    Barrier {
        /// The label (or `#k` for the k-th unlabelled barrier of a thread).
        label: String,
        /// Flags.
        flags: FenceFlags,
        /// Scope, if given.
        scope: Option<Scope>,
        /// Where.
        span: Span,
    },
    /// `if (c) { … } else { … }`
    If {
        /// The condition.
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch.
        els: Vec<Stmt>,
    },
    /// `while (c) { … }`
    While {
        /// The condition.
        cond: Expr,
        /// The body.
        body: Vec<Stmt>,
        /// Where.
        span: Span,
    },
    /// An expression evaluated for its memory effects.
    Expr(Expr),
}

/// A thread parameter: a pointer to a location.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The location's name.
    pub name: String,
    /// Its address space.
    pub space: Space,
    /// Whether its type is an atomic type (`atomic_int*`).
    pub atomic: bool,
    /// Where.
    pub span: Span,
}

/// One thread: a work-item placed in a work-group of a device.
#[derive(Clone, Debug, PartialEq)]
pub struct Thread {
    /// Its number (`P3` is 3).
    pub id: usize,
    /// Its work-group.
    pub work_group: usize,
    /// Its device.
    pub device: usize,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Where it starts.
    pub span: Span,
}

/// What a final-state atom refers to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Var {
    /// `T:r`: register `r` of thread `T`.
    Reg(usize, String),
    /// `x` or `[x]`: the final value of location `x`.
    Loc(String),
}

impl fmt::Display for Var {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Var::Reg(t, r) => write!(f, "{t}:{r}"),
            Var::Loc(l) => f.write_str(l),
        }
    }
}

/// A proposition over the final state.
#[derive(Clone, Debug, PartialEq)]
pub enum Prop {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `v = k`.
    Eq(Var, i64),
    /// `v != k`.
    Ne(Var, i64),
    /// `a /\ b`.
    And(Box<Prop>, Box<Prop>),
    /// `a \/ b`.
    Or(Box<Prop>, Box<Prop>),
    /// `~a`.
    Not(Box<Prop>),
}

impl Prop {
    /// The variables the proposition mentions, in order of first mention.
    pub fn vars(&self, out: &mut Vec<Var>) {
        match self {
            Prop::True | Prop::False => {}
            Prop::Eq(v, _) | Prop::Ne(v, _) => {
                if !out.contains(v) {
                    out.push(v.clone())
                }
            }
            Prop::And(a, b) | Prop::Or(a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Prop::Not(a) => a.vars(out),
        }
    }
    /// Evaluates the proposition, given each variable's value.
    pub fn eval(&self, value: &impl Fn(&Var) -> i64) -> bool {
        match self {
            Prop::True => true,
            Prop::False => false,
            Prop::Eq(v, k) => value(v) == *k,
            Prop::Ne(v, k) => value(v) != *k,
            Prop::And(a, b) => a.eval(value) && b.eval(value),
            Prop::Or(a, b) => a.eval(value) || b.eval(value),
            Prop::Not(a) => !a.eval(value),
        }
    }
}

/// How the final condition quantifies over executions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Quantifier {
    /// `exists P`: some execution ends in P.
    Exists,
    /// `~exists P`: no execution ends in P.
    NotExists,
    /// `forall P`: every execution ends in P.
    Forall,
}

/// The final condition.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The quantifier.
    pub quantifier: Quantifier,
    /// The proposition.
    pub prop: Prop,
    /// Each variable the proposition names, in order of first mention (as
    /// [`Prop::vars`] lists them), with where it is first named, for errors
    /// about it.
    pub mentions: Vec<(Var, Span)>,
}

/// Which syntax a test was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dialect {
    /// Dat3M's: `P0@wg 0, dev 0 (…) { … }`.
    Dat3m,
    /// herd's C-like OpenCL syntax with a trailing `scopeTree`.
    Herd,
    /// herd's older column syntax (`P0 | P1 ;` rows, `x:global`).
    HerdColumns,
}

/// A parsed litmus test.
#[derive(Clone, Debug, PartialEq)]
pub struct Test {
    /// Its name (the header line).
    pub name: String,
    /// Its syntax.
    pub dialect: Dialect,
    /// Initial values of locations, in order of declaration; an array
    /// `y[2] = {0, 0}` has one entry with two values.
    pub init: Vec<(String, Vec<i64>)>,
    /// Initial values of registers: `(thread, register, value)`.
    pub reg_init: Vec<(usize, String, i64)>,
    /// The threads, ordered by id.
    pub threads: Vec<Thread>,
    /// The final condition, if any.
    pub condition: Option<Condition>,
}
