module softdoca.example/rdma_send_go

go 1.19
