from torch.utils.data import DataLoader


def get_dataloaders_cifar10(batch_size, num_workers):
    from torchvision import datasets, transforms

    tf = transforms.Compose([transforms.Resize((224, 224)), transforms.ToTensor()])
    train = datasets.CIFAR10(root="data", train=True, transform=tf, download=True)
    val = datasets.CIFAR10(root="data", train=False, transform=tf)
    return DataLoader(train, batch_size=batch_size, num_workers=num_workers), DataLoader(val, batch_size=batch_size)
