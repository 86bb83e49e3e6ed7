//! OpenCL C's layout of types (section 6.3.5 of the OpenCL C specification,
//! "Alignment of Types"), on modules assembled with rspirv's builder.

use clsync_spirv::spirv::{AddressingModel, Capability, Decoration, MemoryModel, StorageClass};
use clsync_spirv::{Module, SpirvError};
use rspirv::binary::Assemble;
use rspirv::dr::Builder;

fn bytes(b: Builder) -> Vec<u8> {
    b.module()
        .assemble()
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}

fn builder() -> Builder {
    let mut b = Builder::new();
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.capability(Capability::Int8);
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    b
}

#[test]
fn scalars_vectors_and_structs_have_opencl_c_layout() {
    let mut b = builder();
    let char_ = b.type_int(8, 0);
    let int = b.type_int(32, 0);
    let float = b.type_float(32, None);
    let int3 = b.type_vector(int, 3);
    let float4 = b.type_vector(float, 4);
    // struct { char c; int3 v; char d; }: v at 16 (aligned as int4), size 48.
    let s = b.type_struct([char_, int3, char_]);
    // Packed (one more char, or the builder would give the same id as `s`:
    // it deduplicates types): no padding, alignment 1.
    let packed = b.type_struct([char_, int3, char_, char_]);
    b.decorate(packed, Decoration::CPacked, []);
    let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, float4);
    let m = Module::from_bytes(&bytes(b)).unwrap();
    let l = |id| m.layout(id).map(|l| (l.size, l.align)).unwrap();
    assert_eq!(l(char_), (1, 1));
    assert_eq!(l(int3), (16, 16));
    assert_eq!(l(float4), (16, 16));
    assert_eq!(l(ptr), (8, 8));
    assert_eq!(m.member_offsets(s).unwrap(), vec![0, 16, 32]);
    assert_eq!(l(s), (48, 16));
    assert_eq!(m.member_offsets(packed).unwrap(), vec![0, 1, 17, 18]);
    assert_eq!(l(packed), (19, 1));
    // Flattened: the struct's scalars with their offsets (int3 as 3).
    let leaves: Vec<u64> = m.leaves(s).unwrap().iter().map(|l| l.offset).collect();
    assert_eq!(leaves, vec![0, 16, 20, 24, 32]);
}

#[test]
fn a_capability_outside_opencl_c_kernels_is_refused_by_name() {
    let mut b = builder();
    b.capability(Capability::Shader);
    let e = Module::from_bytes(&bytes(b)).unwrap_err();
    assert!(matches!(e, SpirvError::Unsupported(_)), "{e:?}");
    assert!(e.to_string().contains("Shader"), "{e}");
}

#[test]
fn a_32_bit_module_is_refused() {
    let mut b = Builder::new();
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical32, MemoryModel::OpenCL);
    let e = Module::from_bytes(&bytes(b)).unwrap_err();
    assert!(e.to_string().contains("spir64"), "{e}");
}
