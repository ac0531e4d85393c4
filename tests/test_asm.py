from autotune.tools.asm import store_increment


def test_base_plus_index_stores_with_fixed_index_register():
    # kerncraft's own detector gives up on this shape (stores through different index registers)
    block = ["vmovsd (%rcx), %xmm0", "vmulsd (%rdx), %xmm0, %xmm0", "addq $8, %rdx",
             "vaddsd (%rax), %xmm0, %xmm0", "vmovsd %xmm0, (%rax)",
             "vmovsd %xmm0, (%rax,%rsi,8)", "vmovsd %xmm0, (%rax,%rdi,8)",
             "addq $8, %rax", "cmpq %r9, %rax", "jne .L4"]
    assert store_increment(block) == 8


def test_shared_index_register_vectorised():
    block = ["vmovupd (%r8,%rax), %ymm1", "vmovupd %ymm0, (%rdx,%rax)", "vmovupd %ymm1, 32(%rcx,%rax)",
             "addq $64, %rax", "cmpq %rax, %rsi", "jne .L3"]
    assert store_increment(block) == 64


def test_scaled_index_and_inc():
    assert store_increment(["vmovsd %xmm0, (%rax,%rsi,8)", "incq %rsi", "cmpq %rsi, %rdi", "jne .L3"]) == 8
    assert store_increment(["vmovsd %xmm0, (%rbx,%rsi,8)", "leaq 2(%rsi), %rsi", "jne .L3"]) == 16


def test_undecidable_blocks():
    # stores advancing by different amounts
    assert store_increment(["vmovsd %xmm0, (%rax)", "vmovsd %xmm0, (%rbx)", "addq $8, %rax",
                            "addq $16, %rbx", "jne .L1"]) is None
    # no store at all
    assert store_increment(["vaddsd (%rax), %xmm0, %xmm0", "addq $8, %rax", "jne .L1"]) is None
    # the address register is overwritten, not stepped
    assert store_increment(["vmovsd %xmm0, (%rax)", "movq (%rbx), %rax", "addq $8, %rax", "jne .L1"]) is None


def test_several_steps_of_one_register_add_up():
    block = ["vmovupd %ymm0, (%rax)", "addq $32, %rax", "vmovupd %ymm1, (%rax)", "addq $32, %rax", "jne .L1"]
    assert store_increment(block) == 64
