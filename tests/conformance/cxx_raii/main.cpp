// Conformance program (C++20) — two RDMA contexts in one process, owned
// by the RAII classes of doca_raii.hpp: connected by export/connect, an
// RDMA write from one into the other's memory and a send/receive, each
// checked byte for byte; a bad descriptor must surface as a doca::error;
// everything is released by destructors, none of which may fail.
// Exit 0 on success, 1 with a line saying what failed.
#include "doca_raii.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>

namespace {

constexpr size_t half = 4096;

std::byte pattern(size_t i, unsigned seed)
{
	return static_cast<std::byte>((i * 131 + seed * 7 + (i >> 7)) & 0xff);
}

[[noreturn]] void fail(const std::string &why)
{
	std::cerr << "FAIL: " << why << '\n';
	std::exit(1);
}

// Wait for one task's status, progressing the PE.
doca_error_t wait_status(doca::pe &engine, std::optional<doca_error_t> &st, const char *what)
{
	engine.run_until([&] { return st.has_value(); }, what);
	return *st;
}

void run()
{
	auto dev = doca::device::open("soft_lo");
	doca::pe engine;
	std::vector<std::byte> a_mem(2 * half), b_mem(2 * half);
	doca::mmap a_map(dev, a_mem, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	doca::mmap b_map(dev, b_mem, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE);
	auto b_remote = doca::mmap::from_export(dev, b_map.export_rdma(dev));
	doca::buf_inventory inv(16);

	if (b_remote.memrange().size() != b_mem.size())
		fail("the imported mmap's range differs from the exported one");

	doca::rdma a(dev, engine, 8), b(dev, engine, 8);
	auto ca = a.export_connection();
	auto cb = b.export_connection();

	// A descriptor that is not one: a doca::error, and the context lives on.
	std::vector<std::byte> junk(ca.descriptor.size(), std::byte{0x5a});
	try {
		a.connect(ca, junk);
		fail("doca_rdma_connect accepted a junk descriptor");
	} catch (const doca::error &e) {
		if (e.code() != DOCA_ERROR_INVALID_VALUE)
			fail(std::string("a junk descriptor gave ") + e.what() + ", expected DOCA_ERROR_INVALID_VALUE");
		std::cout << "junk descriptor refused: " << e.what() << '\n';
	}

	// Export/connect: no established callback (DOCA calls it for RDMA CM
	// connections only); the write goes out right away and waits for the
	// connection, its completion shows the link is up.
	a.connect(ca, cb.descriptor);
	b.connect(cb, ca.descriptor);

	// RDMA write: a's first half into b's first half.
	std::span<std::byte> a_span(a_mem), b_span(b_mem);
	for (size_t i = 0; i < half; i++)
		a_mem[i] = pattern(i, 1);
	{
		auto src = inv.by_data(a_map, a_span.first(half));
		auto dst = inv.by_addr(b_remote, b_remote.memrange().first(half));
		std::optional<doca_error_t> st;

		a.write(ca.conn, src, dst, [&](doca_error_t s) { st = s; });
		if (doca_error_t s = wait_status(engine, st, "the write"); s != DOCA_SUCCESS)
			throw doca::error(s, "the RDMA write");
		if (!std::equal(a_mem.begin(), a_mem.begin() + half, b_mem.begin()))
			fail("the RDMA write's bytes did not arrive");
	}

	// Send/receive: 1000 bytes from a's second half into b's second half.
	for (size_t i = 0; i < 1000; i++)
		a_mem[half + i] = pattern(i, 2);
	{
		auto room = inv.by_addr(b_map, b_span.subspan(half, half));
		auto msg = inv.by_data(a_map, a_span.subspan(half, 1000));
		std::optional<doca_error_t> rs, ss;
		size_t got = 0;

		b.receive(room, [&](doca_error_t s) { rs = s; });
		a.send(ca.conn, msg, [&](doca_error_t s) { ss = s; });
		if (doca_error_t s = wait_status(engine, ss, "the send"); s != DOCA_SUCCESS)
			throw doca::error(s, "the send");
		if (doca_error_t s = wait_status(engine, rs, "the receive"); s != DOCA_SUCCESS)
			throw doca::error(s, "the receive");
		doca::check(doca_buf_get_data_len(room.get(), &got), "doca_buf_get_data_len");
		if (got != 1000)
			fail("the receive holds " + std::to_string(got) + " bytes, expected 1000");
		if (!std::equal(a_mem.begin() + half, a_mem.begin() + half + 1000, b_mem.begin() + half))
			fail("the message's bytes differ");
	}
	if (a.broken() || b.broken())
		fail("the connection failed");
	if (a.established() || b.established())
		fail("the established callback ran for an export/connect connection (DOCA calls it for RDMA CM "
		     "connections only)");
	std::cout << "write of " << half << " bytes and send/receive of 1000 bytes verified\n";
}

// An exception thrown while objects are live unwinds them all cleanly.
void unwind()
{
	try {
		auto dev = doca::device::open("soft_lo");
		doca::pe engine;
		doca::rdma r(dev, engine, 2);
		auto c = r.export_connection();
		(void)c;
		doca::check(DOCA_ERROR_AGAIN, "a deliberate failure");
	} catch (const doca::error &e) {
		if (e.code() != DOCA_ERROR_AGAIN)
			fail(std::string("unexpected error while unwinding: ") + e.what());
		return;
	}
	fail("the deliberate failure did not throw");
}

} // namespace

int main()
{
	try {
		run();
		unwind();
	} catch (const std::exception &e) {
		fail(e.what());
	}
	if (doca::release_failures() != 0)
		fail(std::to_string(doca::release_failures()) + " release(s) failed in destructors");
	std::cout << "cxx_raii: PASS\n";
	return 0;
}
