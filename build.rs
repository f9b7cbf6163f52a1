// The `cc` crate is meant for build scripts and wants TARGET/HOST; we use it at run
// time to find the same C++ toolchain, so hand the target triple down to the crate.
fn main() {
    println!(
        "cargo:rustc-env=PK_TARGET={}",
        std::env::var("TARGET").unwrap()
    );
    println!("cargo:rerun-if-changed=build.rs");
}
