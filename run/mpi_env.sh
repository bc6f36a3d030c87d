# Sourced by the run/ scripts: lets OpenMPI run as root (containers, CI) and gives the mpirun
# flags every script uses. A rank that runs T threads must not be bound to one core.
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
MPIRUN=(mpirun --oversubscribe --bind-to none)
