/*
 * softdoca — DOCA DPA (host side) on a device without a DPA.
 *
 * Soft devices have no Data-Path Accelerator, so no DPA context can be
 * created and nothing can run: doca_dpa_cap_is_supported answers
 * DOCA_ERROR_NOT_SUPPORTED (what DOCA answers for a device without one,
 * debug log only, since programs probe every device), and every other
 * call returns DOCA_ERROR_NOT_SUPPORTED with an error log line, before it
 * looks at its arguments (no DPA object can exist to be passed).
 */
#include <doca_dpa.h>

#include "log_internal.h"

SDK_LOG_REGISTER(DPA)

static doca_error_t dpa_unsupported(const char *func)
{
	SDK_LOG_ERR("%s: not supported: soft devices have no DPA (Data-Path Accelerator)", func);
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_cap_is_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL) {
		SDK_LOG_ERR("doca_dpa_cap_is_supported: devinfo is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	SDK_LOG_DBG("doca_dpa_cap_is_supported: no: soft devices have no DPA");
	return DOCA_ERROR_NOT_SUPPORTED;
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_create(struct doca_dev *dev, struct doca_dpa **dpa)
{
	(void)dev;
	(void)dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_destroy(struct doca_dpa *dpa)
{
	(void)dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_start(struct doca_dpa *dpa)
{
	(void)dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_stop(struct doca_dpa *dpa)
{
	(void)dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_set_app(struct doca_dpa *dpa, struct doca_dpa_app *app)
{
	(void)dpa;
	(void)app;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_app(struct doca_dpa *dpa, struct doca_dpa_app **app)
{
	(void)dpa;
	(void)app;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_app_get_name(struct doca_dpa_app *app, char *app_name, uint32_t *app_name_len)
{
	(void)app;
	(void)app_name;
	(void)app_name_len;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_set_log_level(struct doca_dpa *dpa, doca_dpa_dev_log_level_t log_level)
{
	(void)dpa;
	(void)log_level;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_log_level(struct doca_dpa *dpa, doca_dpa_dev_log_level_t *log_level)
{
	(void)dpa;
	(void)log_level;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_log_file_set_path(struct doca_dpa *dpa, const char *file_path)
{
	(void)dpa;
	(void)file_path;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_log_file_get_path(struct doca_dpa *dpa, char *file_path, uint32_t *file_path_len)
{
	(void)dpa;
	(void)file_path;
	(void)file_path_len;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_trace_file_set_path(struct doca_dpa *dpa, const char *file_path)
{
	(void)dpa;
	(void)file_path;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_trace_file_get_path(struct doca_dpa *dpa, char *file_path, uint32_t *file_path_len)
{
	(void)dpa;
	(void)file_path;
	(void)file_path_len;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_max_threads_per_kernel(const struct doca_dpa *dpa, unsigned int *value)
{
	(void)dpa;
	(void)value;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_kernel_max_run_time(const struct doca_dpa *dpa, unsigned long long *value)
{
	(void)dpa;
	(void)value;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_device_extend(struct doca_dpa *dpa, struct doca_dev *other_dev, struct doca_dpa **extended_dpa)
{
	(void)dpa;
	(void)other_dev;
	(void)extended_dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_dpa_handle(struct doca_dpa *dpa, doca_dpa_dev_t *handle)
{
	(void)dpa;
	(void)handle;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_uar_id(const struct doca_dpa *dpa, uint32_t *uar_id)
{
	(void)dpa;
	(void)uar_id;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_kernel_launch_update_set(struct doca_dpa *dpa,
					       struct doca_sync_event *wait_event,
					       uint64_t wait_threshold,
					       struct doca_sync_event *comp_event,
					       uint64_t comp_count,
					       unsigned int num_threads,
					       doca_dpa_func_t *func,
					       ...)
{
	(void)dpa;
	(void)wait_event;
	(void)wait_threshold;
	(void)comp_event;
	(void)comp_count;
	(void)num_threads;
	(void)func;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_kernel_launch_update_add(struct doca_dpa *dpa,
					       struct doca_sync_event *wait_event,
					       uint64_t wait_threshold,
					       struct doca_sync_event *comp_event,
					       uint64_t comp_count,
					       unsigned int num_threads,
					       doca_dpa_func_t *func,
					       ...)
{
	(void)dpa;
	(void)wait_event;
	(void)wait_threshold;
	(void)comp_event;
	(void)comp_count;
	(void)num_threads;
	(void)func;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_rpc(struct doca_dpa *dpa, doca_dpa_func_t *func, uint64_t *retval, ...)
{
	(void)dpa;
	(void)func;
	(void)retval;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_peek_at_last_error(const struct doca_dpa *dpa)
{
	(void)dpa;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_alloc(struct doca_dpa *dpa, size_t size, doca_dpa_dev_uintptr_t *dev_ptr)
{
	(void)dpa;
	(void)size;
	(void)dev_ptr;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_free(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr)
{
	(void)dpa;
	(void)dev_ptr;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_h2d_memcpy(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dst_ptr, void *src_ptr, size_t size)
{
	(void)dpa;
	(void)dst_ptr;
	(void)src_ptr;
	(void)size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_h2d_buf_memcpy(struct doca_dpa *dpa,
				     doca_dpa_dev_uintptr_t dst_ptr,
				     struct doca_buf *buf,
				     size_t size)
{
	(void)dpa;
	(void)dst_ptr;
	(void)buf;
	(void)size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_d2h_memcpy(struct doca_dpa *dpa, void *dst_ptr, doca_dpa_dev_uintptr_t src_ptr, size_t size)
{
	(void)dpa;
	(void)dst_ptr;
	(void)src_ptr;
	(void)size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_d2h_buf_memcpy(struct doca_dpa *dpa,
				     struct doca_buf *buf,
				     doca_dpa_dev_uintptr_t src_ptr,
				     size_t size)
{
	(void)dpa;
	(void)buf;
	(void)src_ptr;
	(void)size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_memset(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr, int value, size_t size)
{
	(void)dpa;
	(void)dev_ptr;
	(void)value;
	(void)size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_hash_table_create(struct doca_dpa *dpa,
					unsigned int num_entries,
					struct doca_dpa_hash_table **ht)
{
	(void)dpa;
	(void)num_entries;
	(void)ht;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_hash_table_destroy(struct doca_dpa_hash_table *ht)
{
	(void)ht;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_hash_table_get_dpa_handle(struct doca_dpa_hash_table *ht, doca_dpa_dev_hash_table_t *ht_handle)
{
	(void)ht;
	(void)ht_handle;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_core_num(struct doca_dpa *dpa, unsigned int *num_cores)
{
	(void)dpa;
	(void)num_cores;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_num_eus_per_core(struct doca_dpa *dpa, unsigned int *eus_per_core)
{
	(void)dpa;
	(void)eus_per_core;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_total_num_eus_available(struct doca_dpa *dpa, unsigned int *total_num_eus)
{
	(void)dpa;
	(void)total_num_eus;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_eu_affinity_create(struct doca_dpa *dpa, struct doca_dpa_eu_affinity **affinity)
{
	(void)dpa;
	(void)affinity;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_eu_affinity_destroy(struct doca_dpa_eu_affinity *affinity)
{
	(void)affinity;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_eu_affinity_set(struct doca_dpa_eu_affinity *affinity, unsigned int eu_id)
{
	(void)affinity;
	(void)eu_id;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_eu_affinity_clear(struct doca_dpa_eu_affinity *affinity)
{
	(void)affinity;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_eu_affinity_get(struct doca_dpa_eu_affinity *affinity, unsigned int *eu_id)
{
	(void)affinity;
	(void)eu_id;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_create(struct doca_dpa *dpa, struct doca_dpa_thread **dpa_thread)
{
	(void)dpa;
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_destroy(struct doca_dpa_thread *dpa_thread)
{
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_set_func_arg(struct doca_dpa_thread *dpa_thread, doca_dpa_func_t *func, uint64_t arg)
{
	(void)dpa_thread;
	(void)func;
	(void)arg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_get_func_arg(struct doca_dpa_thread *dpa_thread, doca_dpa_func_t **func, uint64_t *arg)
{
	(void)dpa_thread;
	(void)func;
	(void)arg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_set_local_storage(struct doca_dpa_thread *dpa_thread, doca_dpa_dev_uintptr_t dev_ptr)
{
	(void)dpa_thread;
	(void)dev_ptr;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_get_local_storage(struct doca_dpa_thread *dpa_thread, doca_dpa_dev_uintptr_t *dev_ptr)
{
	(void)dpa_thread;
	(void)dev_ptr;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_set_affinity(struct doca_dpa_thread *dpa_thread,
					  const struct doca_dpa_eu_affinity *affinity)
{
	(void)dpa_thread;
	(void)affinity;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_get_affinity(struct doca_dpa_thread *dpa_thread,
					  const struct doca_dpa_eu_affinity **affinity)
{
	(void)dpa_thread;
	(void)affinity;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_start(struct doca_dpa_thread *dpa_thread)
{
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_stop(struct doca_dpa_thread *dpa_thread)
{
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_run(struct doca_dpa_thread *dpa_thread)
{
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_get_id(struct doca_dpa_thread *dpa_thread, uint32_t *dpa_thread_id)
{
	(void)dpa_thread;
	(void)dpa_thread_id;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_create(struct doca_dpa *dpa, unsigned int num_threads, struct doca_dpa_tg **tg)
{
	(void)dpa;
	(void)num_threads;
	(void)tg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_destroy(struct doca_dpa_tg *tg)
{
	(void)tg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_get_num_threads(struct doca_dpa_tg *tg, unsigned int *num_threads)
{
	(void)tg;
	(void)num_threads;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_set_thread(struct doca_dpa_tg *tg,
					      struct doca_dpa_thread *thread,
					      unsigned int rank)
{
	(void)tg;
	(void)thread;
	(void)rank;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_start(struct doca_dpa_tg *tg)
{
	(void)tg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_thread_group_stop(struct doca_dpa_tg *tg)
{
	(void)tg;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_create(struct doca_dpa *dpa,
					unsigned int queue_size,
					struct doca_dpa_completion **dpa_comp)
{
	(void)dpa;
	(void)queue_size;
	(void)dpa_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_destroy(struct doca_dpa_completion *dpa_comp)
{
	(void)dpa_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_get_queue_size(struct doca_dpa_completion *dpa_comp, unsigned int *queue_size)
{
	(void)dpa_comp;
	(void)queue_size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_set_thread(struct doca_dpa_completion *dpa_comp, struct doca_dpa_thread *dpa_thread)
{
	(void)dpa_comp;
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_get_thread(struct doca_dpa_completion *dpa_comp, struct doca_dpa_thread **dpa_thread)
{
	(void)dpa_comp;
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_start(struct doca_dpa_completion *dpa_comp)
{
	(void)dpa_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_stop(struct doca_dpa_completion *dpa_comp)
{
	(void)dpa_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_completion_get_dpa_handle(struct doca_dpa_completion *dpa_comp,
						doca_dpa_dev_completion_t *handle)
{
	(void)dpa_comp;
	(void)handle;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_create(struct doca_dpa *dpa,
				       unsigned int queue_size,
				       uint64_t user_data,
				       struct doca_dpa_async_ops **async_ops)
{
	(void)dpa;
	(void)queue_size;
	(void)user_data;
	(void)async_ops;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_destroy(struct doca_dpa_async_ops *async_ops)
{
	(void)async_ops;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_get_queue_size(struct doca_dpa_async_ops *async_ops, unsigned int *queue_size)
{
	(void)async_ops;
	(void)queue_size;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_get_user_data(struct doca_dpa_async_ops *async_ops, uint64_t *user_data)
{
	(void)async_ops;
	(void)user_data;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_attach(struct doca_dpa_async_ops *async_ops, struct doca_dpa_completion *dpa_comp)
{
	(void)async_ops;
	(void)dpa_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_start(struct doca_dpa_async_ops *async_ops)
{
	(void)async_ops;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_stop(struct doca_dpa_async_ops *async_ops)
{
	(void)async_ops;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_async_ops_get_dpa_handle(struct doca_dpa_async_ops *async_ops, doca_dpa_dev_async_ops_t *handle)
{
	(void)async_ops;
	(void)handle;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_create(struct doca_dpa *dpa,
						     struct doca_dpa_thread *dpa_thread,
						     struct doca_dpa_notification_completion **notify_comp)
{
	(void)dpa;
	(void)dpa_thread;
	(void)notify_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_destroy(struct doca_dpa_notification_completion *notify_comp)
{
	(void)notify_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_get_thread(struct doca_dpa_notification_completion *notify_comp,
							 struct doca_dpa_thread **dpa_thread)
{
	(void)notify_comp;
	(void)dpa_thread;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_start(struct doca_dpa_notification_completion *notify_comp)
{
	(void)notify_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_stop(struct doca_dpa_notification_completion *notify_comp)
{
	(void)notify_comp;
	return dpa_unsupported(__func__);
}

DOCA_EXPERIMENTAL
doca_error_t doca_dpa_notification_completion_get_dpa_handle(struct doca_dpa_notification_completion *notify_comp,
							     doca_dpa_dev_notification_completion_t *handle)
{
	(void)notify_comp;
	(void)handle;
	return dpa_unsupported(__func__);
}
