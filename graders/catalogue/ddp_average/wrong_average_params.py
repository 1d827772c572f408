# verdict: fail
# sample: matches_single_process_training
# message: not averaged
# why: averages the parameters instead of the gradients (they are already equal): every rank steps with its own gradient
import torch
import torch.distributed as dist


def average_gradients(model: torch.nn.Module) -> None:
    with torch.no_grad():
        for p in model.parameters():
            dist.all_reduce(p.data)
            p.data /= dist.get_world_size()
