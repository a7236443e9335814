// Conformance program (C++20) — a small RAII layer over the DOCA C API,
// the kind a C++ user writes for themselves: one owner class per DOCA
// object (device, mmap, buf inventory, buf, progress engine, RDMA context),
// move-only, releasing in its destructor; every doca_error_t other than
// DOCA_SUCCESS becomes a doca::error exception. Including every public
// header here also proves them C++-clean.
#pragma once

#include <doca_argp.h>
#include <doca_bitfield.h>
#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_buf_pool.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>
#include <doca_rdma_bridge.h>
#include <doca_sync_event.h>
#include <doca_types.h>
#include <doca_version.h>

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace doca {

class error : public std::runtime_error {
public:
	error(doca_error_t code, const std::string &what)
		: std::runtime_error(what + ": " + doca_error_get_name(code)), code_(code)
	{
	}
	doca_error_t code() const noexcept { return code_; }

private:
	doca_error_t code_;
};

inline void check(doca_error_t e, const char *what)
{
	if (e != DOCA_SUCCESS)
		throw error(e, what);
}

// Destructors cannot throw: a failed release is counted, and the program
// checks the count at the end.
inline int &release_failures()
{
	static int n = 0;
	return n;
}

inline void released(doca_error_t e, const char *what) noexcept
{
	if (e != DOCA_SUCCESS) {
		std::fprintf(stderr, "release failed: %s: %s\n", what, doca_error_get_name(e));
		release_failures()++;
	}
}

struct dev_closer {
	void operator()(doca_dev *d) const noexcept { released(doca_dev_close(d), "doca_dev_close"); }
};
struct mmap_destroyer {
	void operator()(doca_mmap *m) const noexcept { released(doca_mmap_destroy(m), "doca_mmap_destroy"); }
};
struct buf_releaser {
	void operator()(doca_buf *b) const noexcept { released(doca_buf_dec_refcount(b, nullptr), "doca_buf_dec_refcount"); }
};
struct inventory_destroyer {
	void operator()(doca_buf_inventory *i) const noexcept
	{
		released(doca_buf_inventory_stop(i), "doca_buf_inventory_stop");
		released(doca_buf_inventory_destroy(i), "doca_buf_inventory_destroy");
	}
};
struct pe_destroyer {
	void operator()(doca_pe *p) const noexcept { released(doca_pe_destroy(p), "doca_pe_destroy"); }
};

using buf = std::unique_ptr<doca_buf, buf_releaser>;

class device {
public:
	static device open(std::string_view ibdev)
	{
		doca_devinfo **list = nullptr;
		uint32_t n = 0;
		doca_dev *dev = nullptr;

		check(doca_devinfo_create_list(&list, &n), "doca_devinfo_create_list");
		for (uint32_t i = 0; i < n && dev == nullptr; i++) {
			char name[DOCA_DEVINFO_IBDEV_NAME_SIZE] = {};

			if (doca_devinfo_get_ibdev_name(list[i], name, sizeof(name)) == DOCA_SUCCESS && ibdev == name) {
				doca_error_t e = doca_dev_open(list[i], &dev);

				doca_devinfo_destroy_list(list);
				check(e, "doca_dev_open");
				return device(dev);
			}
		}
		doca_devinfo_destroy_list(list);
		throw error(DOCA_ERROR_NOT_FOUND, "no device " + std::string(ibdev));
	}
	doca_dev *get() const noexcept { return p_.get(); }

private:
	explicit device(doca_dev *d) : p_(d) {}
	std::unique_ptr<doca_dev, dev_closer> p_;
};

class mmap {
public:
	// Local memory, started at once.
	mmap(const device &dev, std::span<std::byte> mem, uint32_t perms)
	{
		doca_mmap *m = nullptr;

		check(doca_mmap_create(&m), "doca_mmap_create");
		p_.reset(m);
		check(doca_mmap_set_memrange(m, mem.data(), mem.size()), "doca_mmap_set_memrange");
		check(doca_mmap_set_permissions(m, perms), "doca_mmap_set_permissions");
		check(doca_mmap_add_dev(m, dev.get()), "doca_mmap_add_dev");
		check(doca_mmap_start(m), "doca_mmap_start");
	}
	// A peer's memory, from its export.
	static mmap from_export(const device &dev, std::span<const std::byte> desc)
	{
		doca_mmap *m = nullptr;

		check(doca_mmap_create_from_export(nullptr, desc.data(), desc.size(), dev.get(), &m),
		      "doca_mmap_create_from_export");
		return mmap(m);
	}
	std::vector<std::byte> export_rdma(const device &dev) const
	{
		const void *d = nullptr;
		size_t n = 0;

		check(doca_mmap_export_rdma(p_.get(), dev.get(), &d, &n), "doca_mmap_export_rdma");
		auto b = static_cast<const std::byte *>(d);
		return {b, b + n};
	}
	std::span<std::byte> memrange() const
	{
		void *a = nullptr;
		size_t n = 0;

		check(doca_mmap_get_memrange(p_.get(), &a, &n), "doca_mmap_get_memrange");
		return {static_cast<std::byte *>(a), n};
	}
	doca_mmap *get() const noexcept { return p_.get(); }

private:
	explicit mmap(doca_mmap *m) : p_(m) {}
	std::unique_ptr<doca_mmap, mmap_destroyer> p_;
};

class buf_inventory {
public:
	explicit buf_inventory(size_t n)
	{
		doca_buf_inventory *i = nullptr;

		check(doca_buf_inventory_create(n, &i), "doca_buf_inventory_create");
		if (doca_error_t e = doca_buf_inventory_start(i); e != DOCA_SUCCESS) {
			doca_buf_inventory_destroy(i);
			throw error(e, "doca_buf_inventory_start");
		}
		p_.reset(i);
	}
	// A buf holding data (a source).
	buf by_data(const mmap &m, std::span<std::byte> data)
	{
		doca_buf *b = nullptr;

		check(doca_buf_inventory_buf_get_by_data(p_.get(), m.get(), data.data(), data.size(), &b),
		      "doca_buf_inventory_buf_get_by_data");
		return buf(b);
	}
	// An empty buf over memory (a destination).
	buf by_addr(const mmap &m, std::span<std::byte> room)
	{
		doca_buf *b = nullptr;

		check(doca_buf_inventory_buf_get_by_addr(p_.get(), m.get(), room.data(), room.size(), &b),
		      "doca_buf_inventory_buf_get_by_addr");
		return buf(b);
	}

private:
	std::unique_ptr<doca_buf_inventory, inventory_destroyer> p_;
};

class pe {
public:
	pe()
	{
		doca_pe *p = nullptr;

		check(doca_pe_create(&p), "doca_pe_create");
		p_.reset(p);
	}
	bool progress() noexcept { return doca_pe_progress(p_.get()) != 0; }
	// Progress until pred() holds; throws TIME_OUT after limit.
	template <typename Pred>
	void run_until(Pred pred, const char *what, std::chrono::seconds limit = std::chrono::seconds(30))
	{
		auto end = std::chrono::steady_clock::now() + limit;

		while (!pred()) {
			if (std::chrono::steady_clock::now() > end)
				throw error(DOCA_ERROR_TIME_OUT, std::string("waiting for ") + what);
			if (!progress())
				std::this_thread::sleep_for(std::chrono::microseconds(20));
		}
	}
	doca_pe *get() const noexcept { return p_.get(); }

private:
	std::unique_ptr<doca_pe, pe_destroyer> p_;
};

// An RDMA context: created, configured, connected to its PE and started
// by the constructor (which returns once it is RUNNING); stopped (waiting
// for IDLE) and destroyed by the destructor. Tasks complete into the
// std::function given at submit, with the task's status.
class rdma {
public:
	using done_fn = std::function<void(doca_error_t)>;

	struct connection {
		doca_rdma_connection *conn;
		std::vector<std::byte> descriptor;
	};

	rdma(const device &dev, pe &engine, uint32_t tasks) : pe_(engine)
	{
		doca_rdma *r = nullptr;
		union doca_data ud;

		check(doca_rdma_create(dev.get(), &r), "doca_rdma_create");
		r_ = r;
		try {
			ud.ptr = this;
			check(doca_rdma_set_permissions(r, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_WRITE |
								   DOCA_ACCESS_FLAG_RDMA_READ),
			      "doca_rdma_set_permissions");
			check(doca_rdma_task_write_set_conf(r, &rdma::on_write, &rdma::on_write, tasks),
			      "doca_rdma_task_write_set_conf");
			check(doca_rdma_task_send_set_conf(r, &rdma::on_send, &rdma::on_send, tasks),
			      "doca_rdma_task_send_set_conf");
			check(doca_rdma_task_receive_set_conf(r, &rdma::on_receive, &rdma::on_receive, tasks),
			      "doca_rdma_task_receive_set_conf");
			check(doca_rdma_set_connection_state_callbacks(r, nullptr, &rdma::on_up, &rdma::on_down,
								       &rdma::on_down),
			      "doca_rdma_set_connection_state_callbacks");
			check(doca_ctx_set_user_data(ctx(), ud), "doca_ctx_set_user_data");
			check(doca_ctx_set_state_changed_cb(ctx(), &rdma::on_state), "doca_ctx_set_state_changed_cb");
			check(doca_pe_connect_ctx(engine.get(), ctx()), "doca_pe_connect_ctx");
			if (doca_error_t e = doca_ctx_start(ctx()); e != DOCA_SUCCESS && e != DOCA_ERROR_IN_PROGRESS)
				throw error(e, "doca_ctx_start");
			pe_.run_until([this] { return state_ == DOCA_CTX_STATE_RUNNING; }, "RUNNING");
		} catch (...) {
			doca_rdma_destroy(r);
			throw;
		}
	}
	rdma(const rdma &) = delete;
	rdma &operator=(const rdma &) = delete;

	~rdma()
	{
		doca_error_t e = doca_ctx_stop(ctx());

		if (e != DOCA_SUCCESS && e != DOCA_ERROR_IN_PROGRESS)
			released(e, "doca_ctx_stop");
		try {
			pe_.run_until([this] { return state_ == DOCA_CTX_STATE_IDLE; }, "IDLE");
		} catch (const error &) {
			released(DOCA_ERROR_TIME_OUT, "stopping the context");
			return; // leak rather than destroy a context that is not idle
		}
		released(doca_rdma_destroy(r_), "doca_rdma_destroy");
	}

	doca_ctx *ctx() const noexcept { return doca_rdma_as_ctx(r_); }
	int established() const noexcept { return up_; }
	int broken() const noexcept { return down_; }

	connection export_connection()
	{
		const void *d = nullptr;
		size_t n = 0;
		doca_rdma_connection *c = nullptr;

		check(doca_rdma_export(r_, &d, &n, &c), "doca_rdma_export");
		auto b = static_cast<const std::byte *>(d);
		return {c, std::vector<std::byte>(b, b + n)};
	}
	void connect(const connection &mine, std::span<const std::byte> peer)
	{
		check(doca_rdma_connect(r_, peer.data(), peer.size(), mine.conn), "doca_rdma_connect");
	}

	void write(doca_rdma_connection *c, const buf &src, const buf &dst, done_fn done)
	{
		doca_rdma_task_write *t = nullptr;
		auto ud = pending(std::move(done));

		check(doca_rdma_task_write_allocate_init(r_, c, src.get(), dst.get(), ud, &t),
		      "doca_rdma_task_write_allocate_init");
		submit(doca_rdma_task_write_as_task(t), ud);
	}
	void send(doca_rdma_connection *c, const buf &src, done_fn done)
	{
		doca_rdma_task_send *t = nullptr;
		auto ud = pending(std::move(done));

		check(doca_rdma_task_send_allocate_init(r_, c, src.get(), ud, &t), "doca_rdma_task_send_allocate_init");
		submit(doca_rdma_task_send_as_task(t), ud);
	}
	void receive(const buf &dst, done_fn done)
	{
		doca_rdma_task_receive *t = nullptr;
		auto ud = pending(std::move(done));

		check(doca_rdma_task_receive_allocate_init(r_, dst.get(), ud, &t),
		      "doca_rdma_task_receive_allocate_init");
		submit(doca_rdma_task_receive_as_task(t), ud);
	}

private:
	static union doca_data pending(done_fn done)
	{
		union doca_data ud;

		ud.ptr = new done_fn(std::move(done));
		return ud;
	}
	static void submit(doca_task *t, union doca_data ud)
	{
		if (doca_error_t e = doca_task_submit(t); e != DOCA_SUCCESS) {
			delete static_cast<done_fn *>(ud.ptr);
			doca_task_free(t);
			throw error(e, "doca_task_submit");
		}
	}
	// Every task completes here: its status to its function, then freed.
	static void complete(doca_task *t, union doca_data ud)
	{
		std::unique_ptr<done_fn> fn(static_cast<done_fn *>(ud.ptr));
		doca_error_t status = doca_task_get_status(t);

		doca_task_free(t);
		(*fn)(status);
	}
	static void on_write(doca_rdma_task_write *t, union doca_data ud, union doca_data)
	{
		complete(doca_rdma_task_write_as_task(t), ud);
	}
	static void on_send(doca_rdma_task_send *t, union doca_data ud, union doca_data)
	{
		complete(doca_rdma_task_send_as_task(t), ud);
	}
	static void on_receive(doca_rdma_task_receive *t, union doca_data ud, union doca_data)
	{
		complete(doca_rdma_task_receive_as_task(t), ud);
	}
	static void on_state(const union doca_data ud, doca_ctx *, enum doca_ctx_states, enum doca_ctx_states next)
	{
		static_cast<rdma *>(ud.ptr)->state_ = next;
	}
	static void on_up(doca_rdma_connection *, union doca_data, union doca_data ud)
	{
		static_cast<rdma *>(ud.ptr)->up_++;
	}
	static void on_down(doca_rdma_connection *, union doca_data, union doca_data ud)
	{
		static_cast<rdma *>(ud.ptr)->down_++;
	}

	pe &pe_;
	doca_rdma *r_ = nullptr;
	enum doca_ctx_states state_ = DOCA_CTX_STATE_IDLE;
	int up_ = 0, down_ = 0;
};

} // namespace doca
