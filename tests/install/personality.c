/*
 * One source, two roles: built with the host personality it lists the
 * devices it sees ("dev <pci>"); built with the BlueField (DPU) one
 * (DOCA_ARCH_DPU from doca_build_config.h) it opens the device at PCI
 * address argv[1] and lists that device's representors ("rep <pci> <vuid>"),
 * then opens the one standing for host function argv[2], as DOCA's samples
 * do (doca_devinfo_rep_is_equal_pci_addr, doca_dev_rep_open).
 */
#include <stdio.h>
#include <string.h>

#include <doca_dev.h>
#include <doca_error.h>

#ifdef DOCA_ARCH_DPU
static struct doca_dev *open_by_pci(const char *pci)
{
	struct doca_devinfo **list = NULL;
	struct doca_dev *dev = NULL;
	uint32_t nb = 0;

	if (doca_devinfo_create_list(&list, &nb) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < nb && dev == NULL; i++) {
		uint8_t eq = 0;

		if (doca_devinfo_is_equal_pci_addr(list[i], pci, &eq) == DOCA_SUCCESS && eq &&
		    doca_dev_open(list[i], &dev) != DOCA_SUCCESS)
			dev = NULL;
	}
	doca_devinfo_destroy_list(list);
	return dev;
}

static int run(int argc, char **argv)
{
	struct doca_devinfo_rep **reps = NULL;
	struct doca_dev_rep *rep = NULL;
	struct doca_dev *dev;
	uint32_t nb = 0;
	int rc = 1;

	printf("role dpu\n");
	if (argc != 3)
		return 2;
	dev = open_by_pci(argv[1]);
	if (dev == NULL)
		return 1;
	if (doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &nb) != DOCA_SUCCESS)
		goto close_dev;
	for (uint32_t i = 0; i < nb; i++) {
		char pci[DOCA_DEVINFO_REP_PCI_ADDR_SIZE];
		char vuid[DOCA_DEVINFO_REP_VUID_SIZE];
		uint8_t eq = 0;

		if (doca_devinfo_rep_get_pci_addr_str(reps[i], pci) != DOCA_SUCCESS ||
		    doca_devinfo_rep_get_vuid(reps[i], vuid, sizeof(vuid)) != DOCA_SUCCESS)
			goto destroy_list;
		printf("rep %s %s\n", pci, vuid);
		if (rep == NULL && doca_devinfo_rep_is_equal_pci_addr(reps[i], argv[2], &eq) == DOCA_SUCCESS && eq &&
		    doca_dev_rep_open(reps[i], &rep) != DOCA_SUCCESS)
			goto destroy_list;
	}
	if (rep != NULL) {
		printf("opened rep %s\n", argv[2]);
		rc = doca_dev_rep_close(rep) == DOCA_SUCCESS ? 0 : 1;
	}
destroy_list:
	doca_devinfo_rep_destroy_list(reps);
close_dev:
	doca_dev_close(dev);
	return rc;
}
#else
static int run(int argc, char **argv)
{
	struct doca_devinfo **list = NULL;
	uint32_t nb = 0;

	(void)argc;
	(void)argv;
	printf("role host\n");
	if (doca_devinfo_create_list(&list, &nb) != DOCA_SUCCESS)
		return 1;
	for (uint32_t i = 0; i < nb; i++) {
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE];

		if (doca_devinfo_get_pci_addr_str(list[i], pci) == DOCA_SUCCESS)
			printf("dev %s\n", pci);
	}
	doca_devinfo_destroy_list(list);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	return run(argc, argv);
}
